import { ValidateBy, ValidationOptions } from 'class-validator';

// RFC 3339 (section 5.6) also allows a lower-case "t" and "z".
const RFC_3339 =
  /^(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})(?:T(?<hour>\d{2}):(?<minute>\d{2})(?::(?<second>\d{2})(?:\.\d{1,6})?)?(?<zone>Z|[+-](?<offsetHours>\d{2}):(?<offsetMinutes>\d{2}))?)?$/i;

/** A date-time whose offset's `+` arrived as a space: a `+` in a query string that was not percent-encoded. */
const UNENCODED_PLUS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)? \d{2}:\d{2}$/i;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The instants an RFC 3339 date-time can name in UTC and PostgreSQL can store: years 0001 to 9999. */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

const MALFORMED = 'must be an ISO 8601 date-time such as 2026-11-21T12:00:00Z';

/**
 * The instant an RFC 3339 date or date-time names ("2026-11-21", "2026-11-21T12:00:00Z",
 * "2026-11-21T09:00:00-03:00"), or null when it names none: malformed, or a day, time or offset
 * that does not exist ("2027-02-30", "25:00"), which JavaScript's Date would otherwise roll
 * over into another day, or an instant outside the years 0001 to 9999 in UTC (year 0000, or
 * 0001-01-01T00:00:00+01:00, is one PostgreSQL refuses to store). A date-time without an offset
 * is UTC (timestamps are UTC, API.md section 1), whatever the time zone of the host.
 */
export function parseDateTime(value: string): Date | null {
  const read = readDateTime(value);
  return 'instant' in read ? read.instant : null;
}

/** Why `value` names no instant (see parseDateTime), as a validation message; null when it names one. */
export function dateTimeProblem(value: unknown): string | null {
  if (typeof value !== 'string') return MALFORMED;
  const read = readDateTime(value);
  return 'problem' in read ? read.problem : null;
}

function readDateTime(value: string): { instant: Date } | { problem: string } {
  const fields = RFC_3339.exec(value)?.groups;
  if (!fields) {
    return {
      problem: UNENCODED_PLUS.test(value)
        ? 'has a space where its offset\'s "+" belongs: in a query string, write "+" as %2B'
        : MALFORMED,
    };
  }
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
  if (month < 1 || month > 12) return { problem: `names month ${fields.month}, which does not exist (01 to 12)` };
  if (day < 1 || day > daysInMonth(year, month)) {
    return {
      problem: `names a day that does not exist: ${fields.year}-${fields.month} has ${daysInMonth(year, month)} days`,
    };
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return { problem: 'names a time that does not exist (hours 00 to 23, minutes and seconds 00 to 59)' };
  }
  if (offsetHours > 23 || offsetMinutes > 59) {
    return { problem: 'has an offset that does not exist (hours 00 to 23, minutes 00 to 59)' };
  }
  const text = value.toUpperCase();
  const instant = new Date(fields.hour !== undefined && fields.zone === undefined ? `${text}Z` : text);
  const time = instant.getTime();
  if (Number.isNaN(time)) return { problem: MALFORMED };
  if (time < EARLIEST || time > LATEST) {
    return { problem: 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (in UTC)' };
  }
  return { instant };
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
        validate: (value) => dateTimeProblem(value) === null,
        defaultMessage: (args) => dateTimeProblem(args?.value) ?? MALFORMED,
      },
    },
    validation,
  );
}
