import { ValidateBy, ValidationOptions } from 'class-validator';

const RFC_3339 =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:T(?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.\d{1,6})?)?(?<zone>Z|[+-](?<offsetHours>\d{2}):(?<offsetMinutes>\d{2}))?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The instants an RFC 3339 date-time can name in UTC and PostgreSQL can store: years 0001 to 9999. */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The instant an RFC 3339 date or date-time names ("2026-11-21", "2026-11-21T12:00:00Z",
 * "2026-11-21T09:00:00-03:00"), or null when it names none: malformed, or a day, time or offset
 * that does not exist ("2027-02-30", "25:00"), which JavaScript's Date would otherwise roll
 * over into another day, or an instant outside the years 0001 to 9999 in UTC (year 0000, or
 * 0001-01-01T00:00:00+01:00, is one PostgreSQL refuses to store). A date-time without an offset
 * is UTC (timestamps are UTC, API.md section 1), whatever the time zone of the host.
 */
export function parseDateTime(value: string): Date | null {
  const fields = RFC_3339.exec(value)?.groups;
  if (!fields) return null;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = [
    fields.year,
    fields.month,
    fields.day,
    fields.hour,
    fields.minute,
    fields.second,
    fields.offsetHours,
    fields.offsetMinutes,
  ].map((field) => Number(field ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
  const instant = new Date(fields.hour !== undefined && fields.zone === undefined ? `${value}Z` : value);
  const time = instant.getTime();
  return Number.isNaN(time) || time < EARLIEST || time > LATEST ? null : instant;
}

/** The instant of a value that passed @IsDateTime() (see parseDateTime). */
export function instantOf(value: string): Date {
  const instant = parseDateTime(value);
  if (!instant) throw new TypeError(`Not an RFC 3339 date-time: ${value}`);
  return instant;
}

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}

/** An RFC 3339 date or date-time ("2026-11-21", "2026-11-21T12:00:00Z") that is a real instant (see parseDateTime). */
export function IsDateTime(validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      validator: {
        validate: (value) => typeof value === 'string' && parseDateTime(value) !== null,
        defaultMessage: () => 'must be an ISO 8601 date-time such as 2026-11-21T12:00:00Z',
      },
    },
    validation,
  );
}
