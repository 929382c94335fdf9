import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { DataSource } from 'typeorm';
import { COUNTER_CONNECTIONS } from '../../database/database.module';
import { SharedConnections } from '../../database/shared-connections';

/** Expired counters deleted per statement: each batch locks its rows only briefly (a hit on one waits for it). */
const PURGE_BATCH = 5000;

/**
 * Rate-limit counters in PostgreSQL (fixed windows), so that limits hold across every API
 * process of a deployment instead of per process.
 */
@Injectable()
export class PgThrottlerStorage implements ThrottlerStorage {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(COUNTER_CONNECTIONS) private readonly counters: SharedConnections,
  ) {}

  /** Counts a hit: a one-row upsert by key, on the counters' shared connections (COUNTER_CONNECTIONS). */
  async increment(key: string, ttl: number, limit: number) {
    const [row] = await this.counters.query<{ hits: number; seconds: number }>(
      `INSERT INTO rate_limits (key, hits, expires_at) VALUES ($1, 1, now() + make_interval(secs => $2::double precision / 1000))
       ON CONFLICT (key) DO UPDATE SET
         hits = CASE WHEN rate_limits.expires_at <= now() THEN 1 ELSE rate_limits.hits + 1 END,
         expires_at = CASE WHEN rate_limits.expires_at <= now() THEN EXCLUDED.expires_at ELSE rate_limits.expires_at END
       RETURNING hits, GREATEST(1, ceil(extract(epoch FROM expires_at - now())))::int AS seconds`,
      [key, ttl],
    );
    const isBlocked = row.hits > limit;
    return {
      totalHits: row.hits,
      timeToExpire: row.seconds,
      isBlocked,
      timeToBlockExpire: isBlocked ? row.seconds : 0,
    };
  }

  /** Deletes the expired counters, in batches; answers how many. A counter in use is left for the next run. */
  async purgeExpired(): Promise<number> {
    let purged = 0;
    for (;;) {
      const [, deleted]: [unknown, number] = await this.dataSource.query(
        `DELETE FROM rate_limits WHERE key IN (
           SELECT key FROM rate_limits WHERE expires_at <= now() LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`,
      );
      purged += deleted;
      if (deleted < PURGE_BATCH) return purged;
    }
  }
}
