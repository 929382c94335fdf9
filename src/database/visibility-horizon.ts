import type { DataSource, EntityManager } from 'typeorm';

/**
 * The instant before which the set of committed rows stamped `created_at DEFAULT now()` is
 * final: the start of the oldest transaction still running on this database (now, when none
 * is). `now()` is the start of the writing transaction, not its commit, so a transaction that
 * started earlier and commits later adds rows stamped before ones already visible: a client
 * that polls with `created_after=<the last created_at it saw>` would never see them. Lists that
 * such clients poll show only rows stamped before this horizon, so a row appears only once
 * nothing earlier can still appear.
 *
 * Read in a statement of its own, before the list's (READ COMMITTED: each statement sees what
 * committed before it began), so a transaction that ends between the two has its rows seen by
 * the list. Needs `pg_stat_activity` to show the other sessions' `xact_start`: sessions of the
 * same role, which the service's connections all are (others need `pg_read_all_stats`).
 */
export async function visibilityHorizon(db: DataSource | EntityManager): Promise<Date> {
  const rows: Array<{ horizon: Date }> = await db.query(
    `SELECT coalesce(min(xact_start), statement_timestamp()) AS horizon FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend'
        AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`,
  );
  return rows[0].horizon;
}
