import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rate limits count in a sliding window: `hit_times` holds the instants of the hits counted in
 * the last window (at most the limit's number), so that no window of that length ever counts
 * more. The fixed windows before let twice the limit through around a window's end. Counters of
 * the fixed windows start empty (`hits` and `expires_at` stay: the purge reads `expires_at`, and
 * a build without this column keeps counting in them during a rolling deploy).
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
