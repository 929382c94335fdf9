import { Client } from 'pg';
import { isDatabaseUnreachable } from '../common/errors/database-errors';
import { withoutCredentials } from '../config/config';
import { connectionOptions } from './pg-options';

/**
 * Waits for the database of DATABASE_URL at start-up: a server that is starting, restarting or
 * not reachable yet is tried again (with a growing pause) until `timeoutMs` has passed, so that
 * the API and its database can be started together. Anything else (wrong password, unknown
 * database) fails at once. Errors name DATABASE_URL, shown without its credentials.
 */
export async function waitForDatabase(
  databaseUrl: string,
  timeoutMs: number,
  log: (message: string) => void,
): Promise<void> {
  const shown = withoutCredentials(databaseUrl);
  const deadline = Date.now() + timeoutMs;
  let pause = 250;
  for (let attempt = 1; ; attempt++) {
    const client = new Client(connectionOptions(databaseUrl, 'payments-start'));
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      if (attempt > 1) log(`The database of DATABASE_URL (${shown}) answers now`);
      return;
    } catch (error) {
      const reason = (error as Error).message || String(error);
      if (!isDatabaseUnreachable(error)) {
        throw new Error(`Cannot use the database of DATABASE_URL (${shown}): ${reason}`, { cause: error });
      }
      if (Date.now() + pause > deadline) {
        throw new Error(
          `Cannot reach the database of DATABASE_URL (${shown}) after ${Math.round(timeoutMs / 1000)} s ` +
            `(${attempt} attempts): ${reason}`,
          { cause: error },
        );
      }
      if (attempt === 1) {
        log(
          `The database of DATABASE_URL (${shown}) is not reachable (${reason}); ` +
            `trying again for up to ${Math.round(timeoutMs / 1000)} s`,
        );
      }
    } finally {
      await client.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 2000);
  }
}
