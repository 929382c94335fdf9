import fc from 'fast-check';
import {
  apportion,
  centsFromDb,
  checkMoney,
  checkPercentage,
  formatMoney,
  formatPercentage,
  MAX_AMOUNT_CENTS,
  percentOf,
  roundToTotal,
} from './money';

describe('money', () => {
  describe('checkMoney', () => {
    it.each([
      ['150', 15000],
      ['150.5', 15050],
      ['150.50', 15050],
      ['0.01', 1],
      ['10000000.00', MAX_AMOUNT_CENTS],
    ])('accepts %p as %p cents', (input, cents) => {
      expect(checkMoney(input)).toEqual({ ok: true, value: cents });
    });

    it.each([
      [150],
      ['150.555'],
      ['1e3'],
      ['-1.00'],
      ['NaN'],
      ['Infinity'],
      [''],
      [' 150'],
      ['150.'],
      ['.50'],
      ['0150'],
      ['10000000.01'],
      ['99999999999999999999'],
      [null],
      [undefined],
      [{}],
    ])('rejects %p', (input) => {
      expect(checkMoney(input).ok).toBe(false);
    });

    it('rejects zero unless allowed', () => {
      expect(checkMoney('0.00').ok).toBe(false);
      expect(checkMoney('0.00', { allowZero: true })).toEqual({ ok: true, value: 0 });
    });
  });

  describe('formatMoney', () => {
    it.each([
      [0, '0.00'],
      [1, '0.01'],
      [15050, '150.50'],
      [MAX_AMOUNT_CENTS, '10000000.00'],
      [-5, '-0.05'],
    ])('formats %p as %p', (cents, text) => expect(formatMoney(cents)).toBe(text));

    it('refuses fractional cents', () => expect(() => formatMoney(1.5)).toThrow(RangeError));

    it('round-trips every amount in range', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: MAX_AMOUNT_CENTS }), (cents) => {
          expect(checkMoney(formatMoney(cents))).toEqual({ ok: true, value: cents });
        }),
      );
    });
  });

  describe('percentages', () => {
    it.each([
      ['2.99', 29900],
      [0.75, 7500],
      ['100', 1_000_000],
      [0, 0],
      ['0.0001', 1],
    ])('accepts %p as %p units', (input, units) => expect(checkPercentage(input)).toEqual({ ok: true, value: units }));

    it.each([['100.0001'], [-1], ['0.00001'], [1e-7], ['abc'], [Number.NaN], [null], [true]])('rejects %p', (input) => {
      expect(checkPercentage(input).ok).toBe(false);
    });

    it('formats units without trailing zeros', () => {
      expect(formatPercentage(29900)).toBe('2.99');
      expect(formatPercentage(1_000_000)).toBe('100');
      expect(formatPercentage(1)).toBe('0.0001');
    });

    it('rounds half up: 2.5% of 1.00 is 0.03 (2.5 cents)', () => {
      expect(percentOf(100, 25_000)).toBe(3);
      expect(percentOf(100, 24_999)).toBe(2);
      expect(percentOf(MAX_AMOUNT_CENTS, 1_000_000)).toBe(MAX_AMOUNT_CENTS);
    });
  });

  describe('roundToTotal', () => {
    it('rounds exact amounts to a total, one cent at a time to the largest remainders', () => {
      // exact 0.6 + 0.6 = 1.2 cents → total 1: the first of the tied remainders gets it
      expect(roundToTotal([6, 6], 10, 1)).toEqual([1, 0]);
      // exact 1.25 + 2.5 + 3.75 = 7.5 → total 8: floors 1, 2, 3 and the largest remainders .75 .5
      expect(roundToTotal([125, 250, 375], 100, 8)).toEqual([1, 3, 4]);
    });
  });

  describe('apportion', () => {
    it('gives the leftover cents to the largest remainders', () => {
      // 100 cents in thirds: 33.33 each, one cent left, ties go to the first weight
      expect(apportion(100, [1, 1, 1])).toEqual([34, 33, 33]);
      // 10 cents as 15% / 35% / 50%: 1.5, 3.5, 5 → remainders .5 .5 0 → first two tie, earlier wins
      expect(apportion(10, [15, 35, 50])).toEqual([2, 3, 5]);
      expect(apportion(7, [0, 1, 0])).toEqual([0, 7, 0]);
      expect(apportion(0, [0, 0])).toEqual([0, 0]);
    });

    it('refuses what cannot be split', () => {
      expect(() => apportion(5, [])).toThrow(RangeError);
      expect(() => roundToTotal([150, 150], 100, 5)).toThrow(RangeError);
      expect(() => apportion(5, [0, 0])).toThrow(RangeError);
      expect(() => apportion(-1, [1])).toThrow(RangeError);
    });

    it('always sums to the total, each part within one cent of its exact share', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: MAX_AMOUNT_CENTS }),
          fc
            .array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 1, maxLength: 12 })
            .filter((w) => w.some((x) => x > 0)),
          (total, weights) => {
            const parts = apportion(total, weights);
            const sum = weights.reduce((a, b) => a + b, 0);
            expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
            parts.forEach((part, i) => {
              const exact = (total * weights[i]) / sum;
              expect(part).toBeGreaterThanOrEqual(Math.floor(exact));
              expect(part).toBeLessThanOrEqual(Math.floor(exact) + 1);
            });
          },
        ),
      );
    });
  });
});

describe('money edge cases', () => {
  const shape = 'must be a decimal string with at most two decimals, such as "150.00"';
  it.each([
    ['100000000', 'must be at most "10000000.00"'],
    ['150.001', 'must have at most two decimals, such as "150.00"'],
    ['0.001', 'must have at most two decimals, such as "150.00"'],
    ['12.345', 'must have at most two decimals, such as "150.00"'],
    ['00001.00', 'must be written without leading zeros, such as "150.00"'],
    ['01', 'must be written without leading zeros, such as "150.00"'],
    ['10000000.01', 'must be at most "10000000.00"'],
    ['0', 'must be greater than zero'],
    ['0.00', 'must be greater than zero'],
    ['abc', shape],
    ['12a', shape],
    ['a12', shape],
    ['1.5.5', shape],
    ['a1.5', shape],
    ['a.12', shape],
    ['1.ab', shape],
    ['1.', shape],
    ['.5', shape],
    ['-1', shape],
    ['1e5', shape],
    ['', shape],
  ])('checkMoney(%p) answers %p', (input, message) => {
    expect(checkMoney(input)).toEqual({ ok: false, message });
  });

  it('accepts the largest amount and zero when allowed', () => {
    expect(checkMoney('10000000.00')).toEqual({ ok: true, value: 1_000_000_000 });
    expect(checkMoney('0', { allowZero: true })).toEqual({ ok: true, value: 0 });
  });

  it.each([[[5]], [null], [true], [{}], [NaN], [Infinity], ['100.00001'], ['100.0001']])(
    'refuses the percentage %p',
    (input) => {
      expect(checkPercentage(input)).toEqual({
        ok: false,
        message: 'must be a number between 0 and 100 with at most 4 decimals',
      });
    },
  );

  it('reads percentages from strings and numbers alike', () => {
    expect(checkPercentage(100)).toEqual({ ok: true, value: 1_000_000 });
    expect(checkPercentage('100.0000')).toEqual({ ok: true, value: 1_000_000 });
    expect(checkPercentage(0)).toEqual({ ok: true, value: 0 });
    expect(checkPercentage(0.0001)).toEqual({ ok: true, value: 1 });
  });

  it('reads bigint columns as cents and refuses what is not a whole number of cents', () => {
    expect(centsFromDb('123')).toBe(123);
    expect(centsFromDb(10n)).toBe(10);
    expect(centsFromDb(-5)).toBe(-5);
    expect(() => centsFromDb('1.5')).toThrow('Not an integer amount of cents: 1.5');
    expect(() => centsFromDb('9007199254740993')).toThrow(RangeError);
  });

  it('roundToTotal refuses a total below the floors or beyond one cent per part', () => {
    expect(() => roundToTotal([150, 150], 100, 1)).toThrow('roundToTotal(): total out of reach of the parts');
    expect(() => roundToTotal([150, 150], 100, 5)).toThrow('roundToTotal(): total out of reach of the parts');
    expect(roundToTotal([150, 150], 100, 2)).toEqual([1, 1]);
    expect(roundToTotal([150, 150], 100, 4)).toEqual([2, 2]);
  });

  it('roundToTotal gives tied remainders to the earlier parts', () => {
    expect(roundToTotal([50, 50, 50], 100, 1)).toEqual([1, 0, 0]);
    expect(roundToTotal([50, 50, 50], 100, 2)).toEqual([1, 1, 0]);
    expect(roundToTotal([10, 50, 50, 90], 100, 2)).toEqual([0, 1, 0, 1]);
  });

  it('apportion refuses what it cannot split exactly, with its reason', () => {
    expect(() => apportion(-1, [1])).toThrow('apportion() needs a non-negative total');
    expect(() => apportion(5, [0, 0])).toThrow('apportion() needs a positive weight for a non-zero total');
    expect(() => apportion(1.5, [1])).toThrow('Not an integer amount of cents: 1.5');
    expect(() => apportion(1_000_000_000, [2 ** 40])).toThrow('apportion() operands too large');
    expect(apportion(0, [0, 0])).toEqual([0, 0]);
  });
});
