/**
 * Billing periods of a subscription, as plain functions of UTC timestamps.
 *
 * Period `k` of a subscription starts at `anchor + k × (interval_count × interval)`, always
 * counted from the anchor (never from the previous period), so the anchor's day of the month
 * is kept: a monthly plan anchored on 31 January renews on 28 (or 29) February, then on 31 March.
 * A day that a month lacks becomes that month's last day. The time of day is kept too.
 * Days and weeks are exact multiples of 24 hours (UTC has no daylight saving).
 */
export const INTERVALS = ['day', 'week', 'month', 'year'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface BillingCycle {
  interval: Interval;
  intervalCount: number;
}

const DAY_MS = 86_400_000;

/** `date` moved by `steps` calendar units (months keep the day, clamped to the month's last day). */
export function addIntervals(date: Date, interval: Interval, steps: number): Date {
  if (!Number.isInteger(steps)) throw new RangeError(`steps must be an integer, got ${steps}`);
  if (interval === 'day') return new Date(date.getTime() + steps * DAY_MS);
  if (interval === 'week') return new Date(date.getTime() + steps * 7 * DAY_MS);
  const months = interval === 'month' ? steps : steps * 12;
  const totalMonths = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(totalMonths / 12);
  const month = totalMonths - year * 12;
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
  const moved = new Date(date.getTime());
  moved.setUTCFullYear(year, month, day);
  return moved;
}

/** Start of period `index` (0 = the first paid period, which starts at the anchor). */
export function periodStart(anchor: Date, cycle: BillingCycle, index: number): Date {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`period index must be >= 0, got ${index}`);
  return addIntervals(anchor, cycle.interval, index * cycle.intervalCount);
}

/** Period `index` as [start, end): its end is the next period's start. */
export function period(anchor: Date, cycle: BillingCycle, index: number): { start: Date; end: Date } {
  return { start: periodStart(anchor, cycle, index), end: periodStart(anchor, cycle, index + 1) };
}

/** Days after a renewal's due time at which a failed card charge is tried again (API.md 10.2). */
export const RETRY_AFTER_DAYS = [1, 3, 5] as const;

/**
 * When the next attempt of period's charge is due after `attempt` (0 = the renewal itself) failed,
 * or null when the retries are spent and the subscription is canceled.
 */
export function nextRetryAt(dueAt: Date, failedAttempt: number): Date | null {
  const days = RETRY_AFTER_DAYS[failedAttempt];
  return days === undefined ? null : new Date(dueAt.getTime() + days * DAY_MS);
}

/** A pix renewal charge is payable until this long after its due time; unpaid by then: past_due. */
export const PIX_PAYMENT_DAYS = 1;
/** An unpaid pix renewal cancels the subscription this long after its due time (the last card retry). */
export const PIX_CANCEL_AFTER_DAYS = RETRY_AFTER_DAYS[RETRY_AFTER_DAYS.length - 1];

/** `days` whole days (24 h each) after `date`: trial ends, pix due dates. */
export function daysAfter(date: Date, days: number): Date {
  return new Date(date.getTime() + days * DAY_MS);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}
