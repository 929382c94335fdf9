import { describeInLuxonZones } from '../../../test/support/brasilia';
import { boletoPayableUntil, dateInDays, payableUntilOf } from './payment-processor';

describeInLuxonZones('boleto due dates (days in Brasília)', () => {
  it('count days from the date in Brasília, not in UTC', () => {
    // 23:59:59.999 on 1 December in Brasília is already 2 December in UTC.
    expect(dateInDays(0, new Date('2026-12-02T02:59:59.999Z'))).toBe('2026-12-01');
    expect(dateInDays(0, new Date('2026-12-02T03:00:00.000Z'))).toBe('2026-12-02');
    expect(dateInDays(3, new Date('2026-11-28T01:00:00.000Z'))).toBe('2026-11-30');
    expect(dateInDays(1, new Date('2028-02-28T12:00:00.000Z'))).toBe('2028-02-29');
    expect(dateInDays(-1, new Date('2027-01-01T03:00:00.000Z'))).toBe('2026-12-31');
  });

  it('are payable until the due date ends in Brasília', () => {
    expect(boletoPayableUntil('2026-12-01')).toEqual(new Date('2026-12-02T03:00:00.000Z'));
    expect(boletoPayableUntil('2026-12-31')).toEqual(new Date('2027-01-01T03:00:00.000Z'));
    expect(payableUntilOf({ boleto: { digitable_line: '0', due_date: '2026-12-01' } })).toEqual(
      new Date('2026-12-02T03:00:00.000Z'),
    );
  });

  it('follow the days as Brasília kept them when it had summer time', () => {
    // 4 November 2018 began at 01:00 (UTC-2): the clocks skipped midnight.
    expect(boletoPayableUntil('2018-11-03')).toEqual(new Date('2018-11-04T03:00:00.000Z'));
    // 17 February 2019 began at midnight UTC-3, after 23:00-23:59 of the 16th came twice.
    expect(boletoPayableUntil('2019-02-16')).toEqual(new Date('2019-02-17T03:00:00.000Z'));
    expect(dateInDays(0, new Date('2019-02-17T02:30:00.000Z'))).toBe('2019-02-16');
    // In summer time a day ended at 02:00 UTC.
    expect(boletoPayableUntil('2019-01-10')).toEqual(new Date('2019-01-11T02:00:00.000Z'));
  });

  it('refuse what is not a date', () => {
    expect(() => boletoPayableUntil('2026-12-01T00:00:00Z')).toThrow(TypeError);
    expect(() => boletoPayableUntil('2026-02-30')).toThrow(TypeError);
    expect(() => dateInDays(1, new Date(Number.NaN))).toThrow(TypeError);
  });

  it('give back the due date a window asked for: the last day that ends by then', () => {
    const until = boletoPayableUntil('2026-12-01');
    expect(dateInDays(-1, until)).toBe('2026-12-01');
    // A window that ends during a day: the day before it is the last one that ends by then.
    expect(dateInDays(-1, new Date('2026-12-02T15:00:00.000Z'))).toBe('2026-12-01');
    expect(
      boletoPayableUntil(dateInDays(-1, new Date('2026-12-02T15:00:00.000Z'))) <= new Date('2026-12-02T15:00:00.000Z'),
    ).toBe(true);
  });
});
