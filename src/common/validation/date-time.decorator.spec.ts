import { instantOf, parseDateTime } from './date-time.decorator';

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
  ])('%s is %s', (value, iso) => {
    expect(parseDateTime(value)?.toISOString()).toBe(iso);
    expect(instantOf(value).toISOString()).toBe(iso);
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

  it('reads a date-time without an offset as UTC, whatever the time zone of the host', () => {
    // The tests run in São Paulo time (jest.config.js), where Date alone reads such a value as local time.
    expect(new Date('2026-11-21T12:00:00').toISOString()).toBe('2026-11-21T15:00:00.000Z');
    expect(parseDateTime('2026-11-21T12:00:00')?.toISOString()).toBe('2026-11-21T12:00:00.000Z');
    expect(parseDateTime('2026-11-21T12:00')?.toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });
});
