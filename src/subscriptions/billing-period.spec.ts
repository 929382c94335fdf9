import fc from 'fast-check';
import { addIntervals, daysAfter, INTERVALS, nextRetryAt, period, periodStart } from './billing-period';

const at = (iso: string) => new Date(iso);
const monthly = { interval: 'month' as const, intervalCount: 1 };

describe('billing periods', () => {
  it('keeps the anchor day of a monthly plan started on 31 January', () => {
    const anchor = at('2027-01-31T10:15:00.000Z');
    const starts = [0, 1, 2, 3, 4].map((k) => periodStart(anchor, monthly, k).toISOString());
    expect(starts).toEqual([
      '2027-01-31T10:15:00.000Z',
      '2027-02-28T10:15:00.000Z',
      '2027-03-31T10:15:00.000Z',
      '2027-04-30T10:15:00.000Z',
      '2027-05-31T10:15:00.000Z',
    ]);
  });

  it('renews on 29 February in a leap year, and a yearly plan of 29 February on the 28th', () => {
    expect(periodStart(at('2028-01-31T00:00:00Z'), monthly, 1).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    const yearly = { interval: 'year' as const, intervalCount: 1 };
    expect(periodStart(at('2028-02-29T00:00:00Z'), yearly, 1).toISOString()).toBe('2029-02-28T00:00:00.000Z');
    expect(periodStart(at('2028-02-29T00:00:00Z'), yearly, 4).toISOString()).toBe('2032-02-29T00:00:00.000Z');
  });

  it('counts interval_count units per period, across year ends', () => {
    const quarterly = { interval: 'month' as const, intervalCount: 3 };
    expect(period(at('2027-11-30T00:00:00Z'), quarterly, 0)).toEqual({
      start: at('2027-11-30T00:00:00Z'),
      end: at('2028-02-29T00:00:00Z'),
    });
    expect(periodStart(at('2027-12-15T08:00:00Z'), { interval: 'week', intervalCount: 2 }, 1).toISOString()).toBe(
      '2027-12-29T08:00:00.000Z',
    );
    expect(periodStart(at('2027-12-31T23:59:59Z'), { interval: 'day', intervalCount: 1 }, 1).toISOString()).toBe(
      '2028-01-01T23:59:59.000Z',
    );
  });

  it('refuses negative or fractional period indexes', () => {
    expect(() => periodStart(at('2027-01-01T00:00:00Z'), monthly, -1)).toThrow(RangeError);
    expect(() => addIntervals(at('2027-01-01T00:00:00Z'), 'month', 0.5)).toThrow(RangeError);
  });

  it('retries a failed renewal 1, 3 and 5 days after it was due, then gives up', () => {
    const due = at('2027-03-31T12:00:00Z');
    expect([0, 1, 2, 3].map((a) => nextRetryAt(due, a)?.toISOString() ?? null)).toEqual([
      '2027-04-01T12:00:00.000Z',
      '2027-04-03T12:00:00.000Z',
      '2027-04-05T12:00:00.000Z',
      null,
    ]);
    expect(daysAfter(due, 7).toISOString()).toBe('2027-04-07T12:00:00.000Z');
  });

  describe('properties', () => {
    const anchors = fc.date({ min: at('2000-01-01T00:00:00Z'), max: at('2100-01-01T00:00:00Z'), noInvalidDate: true });
    const cycles = fc.record({
      interval: fc.constantFrom(...INTERVALS),
      intervalCount: fc.integer({ min: 1, max: 12 }),
    });

    it('periods follow each other without gap or overlap, and always move forward', () => {
      fc.assert(
        fc.property(anchors, cycles, fc.integer({ min: 0, max: 200 }), (anchor, cycle, k) => {
          const p = period(anchor, cycle, k);
          const next = period(anchor, cycle, k + 1);
          expect(p.end.getTime()).toBe(next.start.getTime());
          expect(p.end.getTime()).toBeGreaterThan(p.start.getTime());
        }),
      );
    });

    it('month and year periods start on the anchor day, or on the last day of a shorter month', () => {
      fc.assert(
        fc.property(
          anchors,
          fc.constantFrom('month' as const, 'year' as const),
          fc.integer({ min: 1, max: 12 }),
          fc.integer({ min: 0, max: 300 }),
          (anchor, interval, intervalCount, k) => {
            const start = periodStart(anchor, { interval, intervalCount }, k);
            const lastDay = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0)).getUTCDate();
            expect(start.getUTCDate()).toBe(Math.min(anchor.getUTCDate(), lastDay));
            expect(start.toISOString().slice(10)).toBe(anchor.toISOString().slice(10));
            const months = (interval === 'month' ? 1 : 12) * intervalCount * k;
            const monthIndex = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
            expect(start.getUTCFullYear() * 12 + start.getUTCMonth()).toBe(monthIndex);
          },
        ),
      );
    });

    it('day and week periods are exact multiples of 24 hours', () => {
      fc.assert(
        fc.property(
          anchors,
          fc.constantFrom('day' as const, 'week' as const),
          fc.integer({ min: 1, max: 12 }),
          (anchor, interval, n) => {
            const p = period(anchor, { interval, intervalCount: n }, 3);
            expect(p.end.getTime() - p.start.getTime()).toBe(n * (interval === 'day' ? 1 : 7) * 86_400_000);
          },
        ),
      );
    });
  });
});
