import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rate limits count in a sliding window: `hit_times` holds the instants of the hits counted in
 * the last window (at most the limit's number), so that no window of that length ever counts
 * more. The fixed windows before let twice the limit through around a window's end.
 *
 * The fixed windows' counts are not carried over (their keys do not say which limit, so which
 * window, they count for): at the deploy every counter starts empty, and a client refused just
 * before it may try a full limit's worth again. `hits` and `expires_at` stay (the purge reads
 * `expires_at`). While builds with and without this column serve side by side, each counts in its
 * own way on the same rows, so up to about twice a limit gets through during the deploy.
 */
export class RateLimitsSlidingWindow1763804500000 implements MigrationInterface {
  name = 'RateLimitsSlidingWindow1763804500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rate_limits ADD COLUMN hit_times timestamptz[] NOT NULL DEFAULT '{}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rate_limits DROP COLUMN hit_times`);
  }
}
