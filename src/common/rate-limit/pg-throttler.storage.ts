import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { DataSource } from 'typeorm';
import { COUNTER_CONNECTIONS } from '../../database/database.module';
import { SharedConnections } from '../../database/shared-connections';

/** Expired counters deleted per statement: each batch locks its rows only briefly (a hit on one waits for it). */
const PURGE_BATCH = 5000;

/**
 * Rate-limit counters in PostgreSQL, so that limits hold across every API process of a
 * deployment instead of per process. Sliding windows: a counter keeps the instants of the hits it
 * counted within the last window (at most `limit` of them), so no window of that length, wherever
 * it starts, counts more than `limit` (fixed windows let twice that through around a window's
 * end). A refused hit is not counted: the caller may go on once the oldest counted hit leaves
 * the window (or, after the limit was lowered, as many as it takes), which is what Retry-After says.
 */
@Injectable()
export class PgThrottlerStorage implements ThrottlerStorage {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(COUNTER_CONNECTIONS) private readonly counters: SharedConnections,
  ) {}

  /**
   * Counts a hit: a one-row upsert by key, on the counters' shared connections
   * (COUNTER_CONNECTIONS). `live`: the hits the row counted within the window ending now, oldest
   * first. `hits` answers them with this one, so the hit is refused when it is over `limit`;
   * `seconds`, when enough of them have left the window for a hit to be counted again.
   */
  async increment(key: string, ttl: number, limit: number) {
    const [row] = await this.counters.query<{ hits: number; seconds: number }>(
      `INSERT INTO rate_limits AS r (key, hits, expires_at, hit_times)
       VALUES ($1, 1, now() + make_interval(secs => $2::double precision / 1000), ARRAY[now()])
       ON CONFLICT (key) DO UPDATE SET (hits, hit_times, expires_at) = (
         SELECT cardinality(live) + 1,
                CASE WHEN cardinality(live) < $3 THEN live || now() ELSE live END,
                CASE WHEN cardinality(live) < $3
                  THEN now() + make_interval(secs => $2::double precision / 1000) ELSE r.expires_at END
           FROM (SELECT ARRAY(
                   SELECT t FROM unnest(r.hit_times) t
                    WHERE t > now() - make_interval(secs => $2::double precision / 1000) ORDER BY t) AS live) l)
       RETURNING hits,
         GREATEST(1, ceil(extract(epoch FROM hit_times[GREATEST(1, cardinality(hit_times) - $3 + 1)]
           + make_interval(secs => $2::double precision / 1000) - now())))::int AS seconds`,
      [key, ttl, limit],
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
