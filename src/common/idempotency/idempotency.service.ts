import { Inject, Injectable } from '@nestjs/common';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../../config/config';
import type { SellerAuthorization } from '../context/request-context';
import { isUuid } from '../validation/uuid';
import { ConflictError, UnprocessableError } from '../errors/api-error';
import { IdempotencyRepository, KeyRef } from './idempotency.repository';
import { stableStringify } from './stable-json';

export const IDEMPOTENCY_TTL_HOURS = 24;
/** An in-progress key whose request died without committing is free again after this. */
export const IDEMPOTENCY_LEASE_SECONDS = 60;

/** What identifies a request apart from its key: same fingerprint, same request. */
export interface RequestShape {
  method: string;
  /** The route template (`/sellers/:id/subaccounts`), never the URL as spelt. */
  route: string;
  params: Record<string, string>;
  body: unknown;
}

export type BeginResult =
  | { kind: 'proceed'; ref: KeyRef; resumeOf: string | null }
  | { kind: 'replay'; status: number; body: unknown; sellerChecks: SellerAuthorization[] };

/**
 * A path parameter in one spelling: UUIDs lower-cased. The router has percent-decoded it once
 * already; decoding it again would give `%252D` (a literal `%2D`, which names no record) the
 * fingerprint of `-`, and so another record's answer.
 */
export function canonicalParam(value: string): string {
  return isUuid(value) ? value.toLowerCase() : value;
}

/**
 * The `Idempotency-Key` rules (API.md section 1) over a PostgreSQL table, so that they hold
 * across API processes. A key belongs to its owner; the request's fingerprint (method, route
 * template, canonical path parameters, keyed hash of the body) tells a replay (same) from a
 * reuse (422). The first request claims the key for a short lease; its answer is recorded in
 * the change's own database transaction (see requestTransaction).
 */
@Injectable()
export class IdempotencyService {
  private readonly hashKey: Buffer;

  constructor(
    private readonly keys: IdempotencyRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.hashKey = createHash('sha256').update(`idempotency:${config.jwtSecret}`).digest();
  }

  /**
   * Bodies may hold card numbers, so the stored fingerprint is an HMAC under a server secret,
   * not a plain digest that could be brute-forced.
   */
  fingerprint(shape: RequestShape): string {
    const params = Object.fromEntries(Object.entries(shape.params).map(([name, v]) => [name, canonicalParam(v)]));
    // An empty object is no body: a client library that always sends `{}` makes the same request as curl.
    const body = isEmptyObject(shape.body) ? undefined : shape.body;
    return createHmac('sha256', this.hashKey)
      .update(stableStringify([shape.method.toUpperCase(), shape.route, params, body]))
      .digest('hex');
  }

  async begin(owner: string, key: string, shape: RequestShape): Promise<BeginResult> {
    const fingerprint = this.fingerprint(shape);
    for (let attempt = 0; attempt < 3; attempt++) {
      const ref: KeyRef = { owner, key, claim: randomUUID() };
      const claimed = await this.keys.claim(ref, fingerprint, IDEMPOTENCY_LEASE_SECONDS, IDEMPOTENCY_TTL_HOURS);
      if (claimed) return { kind: 'proceed', ref, resumeOf: claimed.resourceId };

      const row = await this.keys.find(owner, key);
      if (!row) continue; // released or expired in between: claim it again
      if (row.fingerprint !== fingerprint) {
        throw new UnprocessableError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used for a different request (another body, route or record).',
        );
      }
      if (row.status === 'in_progress') break;
      return { kind: 'replay', status: row.responseStatus!, body: row.responseBody, sellerChecks: row.sellerChecks };
    }
    throw new ConflictError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed. Retry later.',
    );
  }

  purgeExpired(): Promise<number> {
    return this.keys.purgeExpired();
  }
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}
