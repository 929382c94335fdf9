import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { ConflictError, UnprocessableError } from '../errors/api-error';
import { stableStringify } from './stable-json';

export const IDEMPOTENCY_TTL_HOURS = 24;

export interface IdempotencyScope {
  /** Who is calling: the credential, so that two sellers' keys never meet. */
  scope: string;
  method: string;
  path: string;
  key: string;
}

export type BeginResult = { kind: 'proceed' } | { kind: 'replay'; status: number; body: unknown };

/**
 * The `Idempotency-Key` store (API.md section 1), a PostgreSQL table so that it holds across
 * API processes. The first request of a key inserts an in-progress row; the primary key makes
 * a concurrent duplicate find that row (409), a different body is refused (422) and a
 * finished request is replayed. Expired rows (24 h) count as absent and are purged by a job.
 */
@Injectable()
export class IdempotencyService {
  private readonly hashKey: Buffer;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.hashKey = createHash('sha256').update(`idempotency:${config.jwtSecret}`).digest();
  }

  /**
   * A keyed hash of the request body. Bodies may hold card numbers, so the stored hash is
   * an HMAC under a server secret, not a plain digest that could be brute-forced.
   */
  hashBody(body: unknown): string {
    return createHmac('sha256', this.hashKey).update(stableStringify(body)).digest('hex');
  }

  async begin(id: IdempotencyScope, requestHash: string): Promise<BeginResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed: unknown[] = await this.dataSource.query(
        `INSERT INTO idempotency_keys (scope, method, path, key, request_hash, status, expires_at)
         VALUES ($1, $2, $3, $4, $5, 'in_progress', now() + make_interval(hours => $6))
         ON CONFLICT (scope, method, path, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, status = 'in_progress', response_status = NULL,
               response_body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
           WHERE idempotency_keys.expires_at <= now()
         RETURNING 1`,
        [id.scope, id.method, id.path, id.key, requestHash, IDEMPOTENCY_TTL_HOURS],
      );
      if (claimed.length > 0) return { kind: 'proceed' };

      const rows: Array<{ request_hash: string; status: string; response_status: number; response_body: unknown }> =
        await this.dataSource.query(
          `SELECT request_hash, status, response_status, response_body FROM idempotency_keys
           WHERE scope = $1 AND method = $2 AND path = $3 AND key = $4 AND expires_at > now()`,
          [id.scope, id.method, id.path, id.key],
        );
      if (rows.length === 0) continue; // released or expired in between: claim it again
      const [row] = rows;
      if (row.request_hash !== requestHash) {
        throw new UnprocessableError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used with a different request body.',
        );
      }
      if (row.status === 'in_progress') {
        throw new ConflictError(
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still being processed. Retry later.',
        );
      }
      return { kind: 'replay', status: row.response_status, body: row.response_body };
    }
    throw new ConflictError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is being processed. Retry later.',
    );
  }

  async complete(id: IdempotencyScope, status: number, body: unknown): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_keys SET status = 'completed', response_status = $5, response_body = $6
       WHERE scope = $1 AND method = $2 AND path = $3 AND key = $4`,
      [id.scope, id.method, id.path, id.key, status, JSON.stringify(body ?? null)],
    );
  }

  /** Forgets an in-progress key whose request failed on the server's side, so a retry runs again. */
  async release(id: IdempotencyScope): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_keys
       WHERE scope = $1 AND method = $2 AND path = $3 AND key = $4 AND status = 'in_progress'`,
      [id.scope, id.method, id.path, id.key],
    );
  }

  async purgeExpired(): Promise<number> {
    const [, count] = await this.dataSource.query(`DELETE FROM idempotency_keys WHERE expires_at <= now()`);
    return Number(count ?? 0);
  }
}
