import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { SellerAuthorization } from '../context/request-context';

/** One `Idempotency-Key` of one owner, as stored. */
export interface IdempotencyKeyRow {
  fingerprint: string;
  status: 'in_progress' | 'completed';
  responseStatus: number | null;
  responseBody: unknown;
  /** The record the key is tied to before its answer exists (a charge's pending transaction). */
  resourceId: string | null;
  /** The checks on a seller the answered request passed (a replay makes them again). */
  sellerChecks: SellerAuthorization[];
}

export interface KeyRef {
  owner: string;
  key: string;
  /** The claim that holds the key: writes of an earlier, lapsed claim change nothing. */
  claim: string;
}

/** SQL of the `idempotency_keys` table (API.md section 1). Times are the database's clock. */
@Injectable()
export class IdempotencyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Takes the key for a new claim when it is free: unknown, expired, or in progress with a lapsed
   * lease (a request that died). A lapsed key tied to a record is taken only by the same request
   * (same fingerprint), which resumes that record. Returns the record the key is tied to, or
   * undefined when the key is not free.
   */
  async claim(
    ref: KeyRef,
    fingerprint: string,
    leaseSeconds: number,
    ttlHours: number,
  ): Promise<{ resourceId: string | null } | undefined> {
    const rows: Array<{ resource_id: string | null }> = await this.dataSource.query(
      `INSERT INTO idempotency_keys AS k (owner, key, fingerprint, status, claim, lease_until, expires_at)
       VALUES ($1, $2, $3, 'in_progress', $4, now() + make_interval(secs => $5), now() + make_interval(hours => $6))
       ON CONFLICT (owner, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, status = 'in_progress', claim = EXCLUDED.claim,
             lease_until = EXCLUDED.lease_until, response_status = NULL, response_body = NULL, seller_checks = NULL,
             resource_id = CASE WHEN k.expires_at <= now() THEN NULL ELSE k.resource_id END,
             created_at = CASE WHEN k.expires_at <= now() THEN now() ELSE k.created_at END,
             expires_at = CASE WHEN k.expires_at <= now() THEN EXCLUDED.expires_at ELSE k.expires_at END
         WHERE k.expires_at <= now()
            OR (k.status = 'in_progress' AND k.lease_until <= now()
                AND (k.resource_id IS NULL OR k.fingerprint = EXCLUDED.fingerprint))
       RETURNING k.resource_id`,
      [ref.owner, ref.key, fingerprint, ref.claim, leaseSeconds, ttlHours],
    );
    return rows.length > 0 ? { resourceId: rows[0].resource_id } : undefined;
  }

  async find(owner: string, key: string): Promise<IdempotencyKeyRow | undefined> {
    const rows: Array<{
      fingerprint: string;
      status: 'in_progress' | 'completed';
      response_status: number | null;
      response_body: unknown;
      resource_id: string | null;
      seller_checks: SellerAuthorization[] | null;
    }> = await this.dataSource.query(
      `SELECT fingerprint, status, response_status, response_body, resource_id, seller_checks FROM idempotency_keys
       WHERE owner = $1 AND key = $2 AND expires_at > now()`,
      [owner, key],
    );
    if (rows.length === 0) return undefined;
    const [row] = rows;
    return {
      fingerprint: row.fingerprint,
      status: row.status,
      responseStatus: row.response_status,
      responseBody: row.response_body,
      resourceId: row.resource_id,
      sellerChecks: row.seller_checks ?? [],
    };
  }

  /**
   * Records the answer, with the checks on a seller the request passed (in the change's
   * transaction when given); false when the claim no longer holds the key.
   */
  async complete(
    ref: KeyRef,
    answer: { status: number; body: unknown; sellerChecks: SellerAuthorization[] },
    manager?: EntityManager,
  ): Promise<boolean> {
    // An UPDATE answers [rows, affected count] through TypeORM's PostgreSQL driver.
    const [, affected]: [unknown[], number] = await (manager ?? this.dataSource).query(
      `UPDATE idempotency_keys SET status = 'completed', response_status = $4, response_body = $5::json,
         seller_checks = $6::jsonb
       WHERE owner = $1 AND key = $2 AND claim = $3 AND status = 'in_progress'`,
      [
        ref.owner,
        ref.key,
        ref.claim,
        answer.status,
        JSON.stringify(answer.body ?? null),
        answer.sellerChecks.length > 0 ? JSON.stringify(answer.sellerChecks) : null,
      ],
    );
    return affected > 0;
  }

  /** Ties the key to a record, in the transaction that writes the record; false when the claim lapsed. */
  async tie(manager: EntityManager, ref: KeyRef, resourceId: string): Promise<boolean> {
    const [, affected]: [unknown[], number] = await manager.query(
      `UPDATE idempotency_keys SET resource_id = $4
       WHERE owner = $1 AND key = $2 AND claim = $3 AND status = 'in_progress'`,
      [ref.owner, ref.key, ref.claim, resourceId],
    );
    return affected > 0;
  }

  /**
   * Ends the claim without an answer: a key tied to a record stays, with its lease over, so that a
   * retry resumes the record; any other key is forgotten, so that a retry runs again.
   */
  async release(ref: KeyRef): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_keys
       WHERE owner = $1 AND key = $2 AND claim = $3 AND status = 'in_progress' AND resource_id IS NULL`,
      [ref.owner, ref.key, ref.claim],
    );
    await this.dataSource.query(
      `UPDATE idempotency_keys SET lease_until = now()
       WHERE owner = $1 AND key = $2 AND claim = $3 AND status = 'in_progress'`,
      [ref.owner, ref.key, ref.claim],
    );
  }

  async purgeExpired(): Promise<number> {
    const [, count] = await this.dataSource.query(`DELETE FROM idempotency_keys WHERE expires_at <= now()`);
    return Number(count ?? 0);
  }
}
