import { Client } from 'pg';
import { rmSync } from 'node:fs';
import { testDatabasePrefix, withDatabase } from './database';

/** Drops what the run created on an external server, or stops the embedded one. */
export default async function globalTeardown(): Promise<void> {
  const db = globalThis.__PAYMENTS_TEST_DB__;
  if (!db) return;
  if (process.env.DATABASE_URL) {
    const client = new Client({ connectionString: withDatabase(db.templateUrl, 'postgres') });
    await client.connect();
    const templateName = new URL(db.templateUrl).pathname.slice(1);
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) OR datname = $2`,
      [testDatabasePrefix(templateName), templateName],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    await client.end();
  }
  await db.stop();
  if (db.dataDir) rmSync(db.dataDir, { recursive: true, force: true });
}
