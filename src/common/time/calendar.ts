import { DateTime } from 'luxon';

/**
 * The calendar of the platform's days: Brasília (America/Sao_Paulo), where its payers pay. A
 * boleto's due date and a card's expiry month are days and months there, wherever this service
 * runs: a boleto due on 1 December can be paid until that day ends in Brasília (03:00 UTC on
 * 2 December while Brasília is 3 hours behind UTC).
 */
export const CALENDAR_TIME_ZONE = 'America/Sao_Paulo';

/** The instant `at` on the platform's calendar. */
export function onCalendar(at: Date): DateTime {
  const day = DateTime.fromJSDate(at, { zone: CALENDAR_TIME_ZONE });
  if (!day.isValid) throw new TypeError(`Not an instant: ${String(at)}`);
  return day;
}

/** A date (YYYY-MM-DD) on the platform's calendar, from its first instant. */
export function calendarDate(date: string): DateTime {
  const day = DateTime.fromFormat(date, 'yyyy-MM-dd', { zone: CALENDAR_TIME_ZONE });
  if (!day.isValid) throw new TypeError(`Not a date (YYYY-MM-DD): ${date}`);
  return day;
}
