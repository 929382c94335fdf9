import fc from 'fast-check';
import {
  apportion,
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
