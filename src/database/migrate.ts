import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { migrations } from '../../migrations';
import { connectionOptions } from './pg-options';

/** Any fixed number: every process that migrates takes this advisory lock first. */
const MIGRATION_LOCK_KEY = 7_310_221_001;
/** How often a process waiting for another's migrations asks for the lock again. */
const LOCK_POLL_MS = 200;

/**
 * Applies pending migrations. Several processes may start at once against one database
 * (scale-out): a PostgreSQL advisory lock lets one migrate while the others wait, and the
 * others then find nothing pending.
 *
 * The others wait between short tries (`pg_try_advisory_lock`), idle in between, never inside a
 * statement blocked on the lock: a blocked statement holds a snapshot, and CREATE INDEX
 * CONCURRENTLY (a migration's) waits for every older snapshot to go, so migrator and waiter
 * would wait for each other for good, where PostgreSQL sees no deadlock.
 */
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const lock = new Client(connectionOptions(databaseUrl, 'payments-migrate-lock'));
  await lock.connect();
  try {
    for (;;) {
      const { rows } = await lock.query('SELECT pg_try_advisory_lock($1) AS taken', [MIGRATION_LOCK_KEY]);
      if (rows[0].taken) break;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
    const dataSource = new DataSource({
      type: 'postgres',
      url: databaseUrl,
      migrations,
      migrationsTableName: 'schema_migrations',
      migrationsTransactionMode: 'each',
      logging: false,
    });
    await dataSource.initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
