import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { migrations } from '../../migrations';
import { connectionOptions } from './pg-options';

/** Any fixed number: every process that migrates takes this advisory lock first. */
const MIGRATION_LOCK_KEY = 7_310_221_001;

/**
 * Applies pending migrations. Several processes may start at once against one database
 * (scale-out): a PostgreSQL advisory lock lets one migrate while the others wait, and the
 * others then find nothing pending.
 */
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const lock = new Client(connectionOptions(databaseUrl, 'payments-migrate-lock'));
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
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
