import { Settings } from 'luxon';

/**
 * Days in Brasília (America/Sao_Paulo), the platform's calendar of due dates, as the runtime's own
 * time-zone data gives them (Intl), apart from the code under test.
 */
const dayFormat = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'America/Sao_Paulo',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
});

/** The date (YYYY-MM-DD) in Brasília at `at`. */
export const brasiliaDate = (at: Date | number): string => dayFormat.format(at);

/** The date `days` calendar days after `date` (YYYY-MM-DD). */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

/** When `date` ends in Brasília: the first whole hour (UTC) at which the date there is the next one. */
export function brasiliaDayEnd(date: string): Date {
  const next = addDays(date, 1);
  for (let hour = 0; hour < 24; hour++) {
    const at = new Date(`${next}T${String(hour).padStart(2, '0')}:00:00.000Z`);
    if (brasiliaDate(at) === next) return at;
  }
  throw new Error(`No end found for ${date}`);
}

/**
 * Describes `body` once for each of several default zones of luxon (the library the platform's
 * calendar uses), so that code that forgets to name Brasília gives other days and fails. The
 * process itself runs in India's zone (jest.config.js).
 */
export function describeInLuxonZones(title: string, body: () => void): void {
  describe.each(['UTC', 'Asia/Tokyo', 'America/Sao_Paulo'])(`${title}, luxon's default zone %s`, (zone) => {
    const processZone = Settings.defaultZone;
    beforeAll(() => {
      Settings.defaultZone = zone;
    });
    afterAll(() => {
      Settings.defaultZone = processZone;
    });
    body();
  });
}
