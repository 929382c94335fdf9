import { dateTimeProblem, instantOf, parseDateTime } from './date-time.decorator';

describe('parseDateTime', () => {
  it.each([
    ['2026-11-21T12:00:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T12:00:00.123Z', '2026-11-21T12:00:00.123Z'],
    ['2026-11-21T12:00:00.123456Z', '2026-11-21T12:00:00.123Z'],
    ['2026-11-21T12:00Z', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T09:00:00-03:00', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21T17:30:00+05:30', '2026-11-21T12:00:00.000Z'],
    ['2026-11-21', '2026-11-21T00:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['2026-12-31T23:59:59Z', '2026-12-31T23:59:59.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['2026-11-21t12:00:00z', '2026-11-21T12:00:00.000Z'], // RFC 3339 allows lower case
    ['2026-11-21t09:00:00-03:00', '2026-11-21T12:00:00.000Z'],
  ])('%s is %s', (value, iso) => {
    expect(parseDateTime(value)?.toISOString()).toBe(iso);
    expect(instantOf(value).toISOString()).toBe(iso);
    expect(dateTimeProblem(value)).toBeNull();
  });

  it.each([
    ['a day its month does not have', '2027-02-30T00:00:00Z'],
    ['29 February of a common year', '2027-02-29'],
    ['29 February of a century that is not a leap year', '2100-02-29T00:00:00Z'],
    ['31 April', '2026-04-31T00:00:00Z'],
    ['day 0', '2026-11-00'],
    ['month 13', '2026-13-01'],
    ['month 0', '2026-00-10'],
    ['hour 24', '2026-11-21T24:00:00Z'],
    ['hour 25', '2026-11-21T25:00:00Z'],
    ['minute 60', '2026-11-21T12:60:00Z'],
    ['second 60', '2026-11-21T12:00:60Z'],
    ['an offset of 24 hours', '2026-11-21T12:00:00+24:00'],
    ['an offset with minute 60', '2026-11-21T12:00:00+01:60'],
    ['a word', 'yesterday'],
    ['a week date', '2026-W01'],
    ['no separators', '20261121'],
    ['a time without a date', 'T12:00:00Z'],
    ['a trailing space', '2026-11-21T12:00:00Z '],
    ['year 0000, which PostgreSQL cannot store', '0000-01-01T00:00:00Z'],
    ['an instant in year 0000 in UTC', '0001-01-01T00:00:00+01:00'],
    ['an instant in year 10000 in UTC', '9999-12-31T23:30:00-01:00'],
  ])('refuses %s (%s)', (_name, value) => {
    expect(parseDateTime(value)).toBeNull();
    expect(() => instantOf(value)).toThrow(TypeError);
  });

  it.each([
    ['2027-02-30T00:00:00Z', 'names a day that does not exist: 2027-02 has 28 days'],
    ['2028-02-30', 'names a day that does not exist: 2028-02 has 29 days'],
    ['2026-04-31', 'names a day that does not exist: 2026-04 has 30 days'],
    ['2026-11-00', 'names a day that does not exist: 2026-11 has 30 days'],
    ['2026-13-01', 'names month 13, which does not exist (01 to 12)'],
    ['2026-11-21T24:00:00Z', 'names a time that does not exist (hours 00 to 23, minutes and seconds 00 to 59)'],
    ['2026-11-21T12:00:60Z', 'names a time that does not exist (hours 00 to 23, minutes and seconds 00 to 59)'],
    ['2026-11-21T12:00:00+01:60', 'has an offset that does not exist (hours 00 to 23, minutes 00 to 59)'],
    ['2026-11-21T12:00:00 03:00', 'has a space where its offset\'s "+" belongs: in a query string, write "+" as %2B'],
    ['0000-01-01T00:00:00Z', 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (in UTC)'],
    ['9999-12-31T23:30:00-01:00', 'must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z (in UTC)'],
    ['yesterday', 'must be an ISO 8601 date-time such as 2026-11-21T12:00:00Z'],
    ['2026-11-21T12:00:00Z ', 'must be an ISO 8601 date-time such as 2026-11-21T12:00:00Z'],
  ])('says why %s names no instant: %s', (value, problem) => {
    expect(dateTimeProblem(value)).toBe(problem);
  });

  it('refuses what is not a string as a date-time', () => {
    for (const value of [20261121, null, undefined, {}, ['2026-11-21']]) {
      expect(dateTimeProblem(value)).toBe('must be an ISO 8601 date-time such as 2026-11-21T12:00:00Z');
    }
  });

  it('reads a date-time without an offset as UTC, whatever the time zone of the host', () => {
    // The tests run in India's time (jest.config.js), where Date alone reads such a value as local time.
    expect(new Date('2026-11-21T12:00:00').toISOString()).toBe('2026-11-21T06:30:00.000Z');
    expect(parseDateTime('2026-11-21T12:00:00')?.toISOString()).toBe('2026-11-21T12:00:00.000Z');
    expect(parseDateTime('2026-11-21T12:00')?.toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });
});
