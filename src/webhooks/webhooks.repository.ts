import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { keysetSql, keysetSqlAfterRow, PageRequest, sellerCursorRow } from '../common/pagination/pagination';
import { setWithUpdatedAt } from '../database/updated-at';
import { visibilityHorizon } from '../database/visibility-horizon';

export interface EndpointRow {
  id: string;
  seq: string;
  seller_id: string;
  url: string;
  events: string[];
  description: string;
  active: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  seq: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_response_body: string | null;
  last_error: string | null;
  created_at: Date;
}

export interface AttemptRow {
  id: string;
  seq: string;
  number: number;
  started_at: Date;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
}

export interface EventRow {
  id: string;
  seq: string;
  type: string;
  data: object;
  created_at: string;
}

/** A delivery claimed by a worker for one attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  attempt: number;
  schedule_step: number;
  /** Set when this attempt is a manual one (see retryNow): the automatic attempt it put aside. */
  resume_at: Date | null;
  url: string;
  secrets: string[];
  event_id: string;
  event_type: string;
  event_created_at: string;
  event_data: object;
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  scheduleStep: number;
  delayMs: number;
}

export type Updatable = Partial<Pick<EndpointRow, 'url' | 'events' | 'description' | 'active'>>;

const ENDPOINT_COLUMNS = `id, seq, seller_id, url, events, description, active, disabled_reason, created_at, updated_at`;
const DELIVERY_COLUMNS = `id, seq, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, last_attempt_at,
  last_response_status, last_response_body, last_error, created_at`;
const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** A delivery whose attempt is being sent: its lease runs (see claimDue). */
const IN_FLIGHT = `(webhook_deliveries.locked_until > now()) IS TRUE`;
/** Wakes every worker once the transaction commits. */
const NOTIFY_DELIVERIES = `SELECT pg_notify('webhook_deliveries', '')`;
export const DELIVERIES_CHANNEL = 'webhook_deliveries';
export const OUTBOX_CHANNEL = 'outbox_events';

/**
 * SQL of webhook endpoints, deliveries and attempts, and the seller's view of the outbox.
 * Reads made for a seller name the seller; the worker's queries (claim, complete, dispatch)
 * work across sellers by design.
 */
@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  // --- endpoints -----------------------------------------------------------------------

  /** Serialises endpoint creation per seller (the 16-endpoint limit) until the transaction ends. */
  async lockSellerEndpoints(manager: EntityManager, sellerId: string): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1, 0))`, [sellerId]);
  }

  async countForSeller(manager: EntityManager, sellerId: string): Promise<number> {
    const [row]: Array<{ n: number }> = await manager.query(
      `SELECT count(*)::int AS n FROM webhook_endpoints WHERE seller_id = $1 AND deleted_at IS NULL`,
      [sellerId],
    );
    return row.n;
  }

  async insertEndpoint(
    manager: EntityManager,
    input: { sellerId: string; url: string; events: string[]; description: string; active: boolean; secret: string },
  ): Promise<EndpointRow> {
    const [row]: EndpointRow[] = await manager.query(
      `INSERT INTO webhook_endpoints (seller_id, url, events, description, active, secret)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${ENDPOINT_COLUMNS}`,
      [input.sellerId, input.url, input.events, input.description, input.active, input.secret],
    );
    return row;
  }

  async findEndpoint(sellerId: string, id: string): Promise<EndpointRow | null> {
    const [row]: EndpointRow[] = await this.dataSource.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE seller_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [sellerId, id],
    );
    return row ?? null;
  }

  /**
   * The endpoint, locked until the transaction ends: `update` to change it, `share` to queue
   * deliveries for it (many at once; a change or a disable waits for them, and they for it).
   */
  async lockEndpoint(
    manager: EntityManager,
    sellerId: string,
    id: string,
    mode: 'update' | 'share' = 'update',
  ): Promise<EndpointRow | null> {
    const [row]: EndpointRow[] = await manager.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE seller_id = $1 AND id = $2 AND deleted_at IS NULL
       FOR ${mode === 'update' ? 'UPDATE' : 'SHARE'}`,
      [sellerId, id],
    );
    return row ?? null;
  }

  async listEndpoints(sellerId: string, page: PageRequest): Promise<EndpointRow[]> {
    const params: unknown[] = [sellerId];
    // In creation order (a seller has 16 endpoints at most: its index on seq finds them, then they are sorted).
    const { condition, orderAndLimit } = keysetSqlAfterRow(
      ['w.created_at', 'w.seq'],
      (position) => sellerCursorRow('webhook_endpoints', position, '$1'),
      page,
      params,
    );
    return this.dataSource.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.seller_id = $1 AND w.deleted_at IS NULL
       ${condition ? `AND ${condition}` : ''} ${orderAndLimit}`,
      params,
    );
  }

  async updateEndpoint(manager: EntityManager, id: string, changes: Updatable): Promise<EndpointRow> {
    const params: unknown[] = [id];
    const sets = Object.entries(changes).map(([column, value]): [string, string] => [column, `$${params.push(value)}`]);
    // Reactivating clears why it was disabled and the failure streak.
    if (changes.active === true) sets.push(['disabled_reason', 'NULL::text'], ['failing_since', 'NULL::timestamptz']);
    const [[row]]: [EndpointRow[], number] = await manager.query(
      `UPDATE webhook_endpoints SET ${setWithUpdatedAt(sets)} WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
      params,
    );
    return row;
  }

  /**
   * The new secret signs from now on; the current one is retired and keeps signing too for
   * `overlapHours`, as do the ones retired before it until their own time is up (at most
   * `maxRetired` of them, the newest). Expired ones are removed.
   */
  async rotateSecret(
    manager: EntityManager,
    id: string,
    secret: string,
    overlapHours: number,
    maxRetired: number,
  ): Promise<void> {
    await manager.query(
      `WITH dropped AS (
         DELETE FROM webhook_retired_secrets r
         WHERE r.endpoint_id = $1 AND (r.expires_at <= now() OR r.secret NOT IN (
           SELECT k.secret FROM webhook_retired_secrets k WHERE k.endpoint_id = $1 AND k.expires_at > now()
           ORDER BY k.expires_at DESC LIMIT $4 - 1))
       ), retired AS (
         INSERT INTO webhook_retired_secrets (endpoint_id, secret, expires_at)
         SELECT id, secret, now() + make_interval(hours => $3) FROM webhook_endpoints WHERE id = $1
       )
       UPDATE webhook_endpoints SET secret = $2, updated_at = now() WHERE id = $1`,
      [id, secret, overlapHours, maxRetired],
    );
  }

  async softDeleteEndpoint(manager: EntityManager, id: string): Promise<void> {
    await manager.query(
      `UPDATE webhook_endpoints SET deleted_at = now(), active = false, updated_at = now() WHERE id = $1`,
      [id],
    );
  }

  /**
   * Disables an active endpoint (410 Gone, or days of failures) and answers its seller; with
   * `failingForMs`, only if its failure streak has gone on that long, as read under the row's lock
   * (a success another worker recorded meanwhile has ended it). Null when it did not disable it.
   */
  async disableEndpoint(
    manager: EntityManager,
    id: string,
    reason: string,
    failingForMs: number | null,
  ): Promise<{ seller_id: string; url: string } | null> {
    const [rows]: [Array<{ seller_id: string; url: string }>, number] = await manager.query(
      `UPDATE webhook_endpoints SET active = false, disabled_reason = $2, updated_at = now()
       WHERE id = $1 AND active AND deleted_at IS NULL
         AND ($3::float8 IS NULL OR failing_since <= now() - make_interval(secs => $3::float8 / 1000))
       RETURNING seller_id, url`,
      [id, reason, failingForMs],
    );
    return rows[0] ?? null;
  }

  /** An endpoint that stops receiving: its pending deliveries fail (a replay can send them later). */
  async failPendingDeliveries(manager: EntityManager, endpointId: string, reason: string): Promise<void> {
    await manager.query(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL, resume_at = NULL,
         last_error = $2, updated_at = now()
       WHERE endpoint_id = $1 AND status = 'pending'`,
      [endpointId, reason],
    );
  }

  // --- deliveries and attempts (seller's view) ------------------------------------------

  async listDeliveries(
    endpointId: string,
    filters: { status?: string; eventType?: string },
    page: PageRequest,
  ): Promise<DeliveryRow[]> {
    const params: unknown[] = [endpointId];
    const where = ['endpoint_id = $1'];
    if (filters.status) where.push(`status = $${params.push(filters.status)}`);
    if (filters.eventType) where.push(`event_type = $${params.push(filters.eventType)}`);
    const { condition, orderAndLimit } = keysetSql('seq', page, params);
    if (condition) where.push(condition);
    return this.dataSource.query(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${where.join(' AND ')} ${orderAndLimit}`,
      params,
    );
  }

  async findDelivery(endpointId: string, id: string): Promise<DeliveryRow | null> {
    const [row]: DeliveryRow[] = await this.dataSource.query(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1 AND id = $2`,
      [endpointId, id],
    );
    return row ?? null;
  }

  async listAttempts(deliveryId: string, page: PageRequest): Promise<AttemptRow[]> {
    const params: unknown[] = [deliveryId];
    const { condition, orderAndLimit } = keysetSql('seq', page, params);
    return this.dataSource.query(
      `SELECT id, seq, number, started_at, duration_ms, response_status, error FROM webhook_attempts
       WHERE delivery_id = $1 ${condition ? `AND ${condition}` : ''} ${orderAndLimit}`,
      params,
    );
  }

  /** A delivery made outside the fan-out (the endpoint's `test` event), due now. */
  async insertDelivery(
    manager: EntityManager,
    endpointId: string,
    eventId: string,
    eventType: string,
  ): Promise<DeliveryRow> {
    const [row]: DeliveryRow[] = await manager.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, next_attempt_at)
       VALUES ($1, $2, $3, now()) RETURNING ${DELIVERY_COLUMNS}`,
      [endpointId, eventId, eventType],
    );
    await manager.query(NOTIFY_DELIVERIES);
    return row;
  }

  /**
   * One more attempt now. A pending delivery keeps its schedule; a finished one gets a
   * single attempt (a failure makes it `failed` again). A delivery whose attempt is in flight
   * keeps it (and its place in the concurrency caps): the request is noted and applied when that
   * attempt is recorded (completeAttempts), so the next attempt goes out right after it.
   */
  async retryNow(
    manager: EntityManager,
    endpointId: string,
    id: string,
    singleAttemptStep: number,
  ): Promise<DeliveryRow | null> {
    const [rows]: [DeliveryRow[], number] = await manager.query(
      `UPDATE webhook_deliveries SET
         resend_requested = CASE WHEN ${IN_FLIGHT} THEN coalesce(resend_requested, 'retry') END,
         schedule_step = CASE WHEN ${IN_FLIGHT} OR status = 'pending' THEN schedule_step ELSE $3 END,
         resume_at = CASE WHEN ${IN_FLIGHT} THEN resume_at WHEN status <> 'pending' THEN NULL
                          WHEN next_attempt_at > now() THEN next_attempt_at ELSE resume_at END,
         status = 'pending',
         next_attempt_at = CASE WHEN ${IN_FLIGHT} THEN next_attempt_at ELSE now() END,
         updated_at = now()
       WHERE endpoint_id = $1 AND id = $2 RETURNING ${DELIVERY_COLUMNS}`,
      [endpointId, id, singleAttemptStep],
    );
    if (rows.length) await manager.query(NOTIFY_DELIVERIES);
    return rows[0] ?? null;
  }

  /**
   * Queues the seller's events of a period again for one endpoint (those it subscribes to,
   * optionally only some types) with a fresh retry schedule; answers how many.
   */
  async replay(
    manager: EntityManager,
    endpoint: Pick<EndpointRow, 'id' | 'seller_id' | 'events'>,
    period: { since: string; until: string | null; types: string[] | null },
  ): Promise<number> {
    const [{ queued }]: Array<{ queued: number }> = await manager.query(
      `WITH queued AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, next_attempt_at)
         SELECT $1, o.id, o.type, now() FROM outbox_events o
         WHERE o.seller_id = $2 AND o.created_at >= $3 AND ($4::timestamptz IS NULL OR o.created_at < $4)
           AND o.type <> 'webhook.test'
           AND ($5::text[] IS NULL OR o.type = ANY ($5))
           AND (o.type = ANY ($6) OR '*' = ANY ($6))
         ON CONFLICT (endpoint_id, event_id) DO UPDATE
           -- A delivery in flight keeps its attempt; the replay is applied when it is recorded.
           SET resend_requested = CASE WHEN ${IN_FLIGHT} THEN 'replay' END,
             status = 'pending',
             schedule_step = CASE WHEN ${IN_FLIGHT} THEN webhook_deliveries.schedule_step ELSE 0 END,
             next_attempt_at = CASE WHEN ${IN_FLIGHT} THEN webhook_deliveries.next_attempt_at ELSE now() END,
             resume_at = CASE WHEN ${IN_FLIGHT} THEN webhook_deliveries.resume_at END,
             updated_at = now()
         RETURNING 1
       )
       SELECT count(*)::int AS queued FROM queued`,
      [endpoint.id, endpoint.seller_id, period.since, period.until, period.types, endpoint.events],
    );
    if (queued > 0) await manager.query(NOTIFY_DELIVERIES);
    return queued;
  }

  // --- the seller's events ----------------------------------------------------------------

  async listEvents(
    sellerId: string,
    filters: { type?: string; createdAfter?: Date },
    page: PageRequest,
  ): Promise<EventRow[] | null> {
    // A feed that backends poll: only events nothing earlier can still join (see visibilityHorizon),
    // in the order of their creation time, so that polling from the last created_at seen misses none.
    const params: unknown[] = [sellerId, await visibilityHorizon(this.dataSource)];
    const where = ['e.seller_id = $1', 'e.created_at < $2'];
    if (filters.type) where.push(`e.type = $${params.push(filters.type)}`);
    if (filters.createdAfter) where.push(`e.created_at >= $${params.push(filters.createdAfter)}`);
    const { condition, orderAndLimit } = keysetSqlAfterRow(
      ['e.created_at', 'e.seq'],
      (position) => sellerCursorRow('outbox_events', position, '$1'),
      page,
      params,
    );
    if (condition) where.push(condition);
    const rows: EventRow[] = await this.dataSource.query(
      `SELECT e.id, e.seq, e.type, e.data, ${ISO('e.created_at')} AS created_at FROM outbox_events e
       WHERE ${where.join(' AND ')} ${orderAndLimit}`,
      params,
    );
    if (rows.length > 0 || page.after === null) return rows;
    // An empty page after a cursor: the end of the feed, or the cursor's event is gone (purged
    // after 90 days, or another seller's), which the keyset cannot go on from: null then.
    const cursor: unknown[] = await this.dataSource.query(sellerCursorRow('outbox_events', '$1', '$2'), [
      page.after,
      sellerId,
    ]);
    return cursor.length > 0 ? rows : null;
  }

  /** An event delivered only where the caller says (a `test` event): the fan-out leaves it alone. */
  async markEventDispatched(manager: EntityManager, eventId: string): Promise<void> {
    await manager.query(`UPDATE outbox_events SET dispatched_at = now() WHERE id = $1`, [eventId]);
  }

  // --- the workers ------------------------------------------------------------------------

  /**
   * Fans a batch of undispatched outbox events out to the matching active endpoints of
   * their sellers (one delivery per endpoint and event: the unique key makes a second
   * fan-out a no-op) and marks them dispatched, in one statement. The endpoints are share-locked,
   * so an endpoint being disabled meanwhile either gets these deliveries failed with the rest
   * or gets none. Workers dispatching at
   * once take different batches (SKIP LOCKED). Notifies the workers when deliveries were made.
   */
  async dispatchBatch(limit: number): Promise<{ events: number; deliveries: number }> {
    const [row]: Array<{ events: number; deliveries: number }> = await this.dataSource.query(
      `WITH batch AS (
         SELECT id, seller_id, type FROM outbox_events WHERE dispatched_at IS NULL
         ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED
       ), fanned AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, next_attempt_at)
         SELECT e.id, b.id, b.type, now() FROM batch b
         JOIN webhook_endpoints e ON e.seller_id = b.seller_id AND e.active AND e.deleted_at IS NULL
           AND (b.type = ANY (e.events) OR '*' = ANY (e.events))
         WHERE b.type <> 'webhook.test'
         FOR SHARE OF e
         ON CONFLICT (endpoint_id, event_id) DO NOTHING
         RETURNING 1
       ), marked AS (
         UPDATE outbox_events SET dispatched_at = now() WHERE id IN (SELECT id FROM batch) RETURNING 1
       ), counts AS (
         SELECT (SELECT count(*) FROM marked)::int AS events, (SELECT count(*) FROM fanned)::int AS deliveries
       )
       SELECT events, deliveries, CASE WHEN deliveries > 0 THEN pg_notify('webhook_deliveries', '') END
       FROM counts`,
      [limit],
    );
    return { events: row.events, deliveries: row.deliveries };
  }

  /**
   * Claims up to `limit` due deliveries for one attempt each: the attempt number goes up and
   * a lease hides them from other workers until the attempt is recorded (or the lease ends,
   * when the worker died). SKIP LOCKED lets several workers claim at once without taking the
   * same delivery. An endpoint gets at most `perEndpoint` requests in flight and a seller's
   * endpoints `perSeller` together, counted across workers: a slow endpoint, or a seller's
   * many slow endpoints, cannot take every worker slot. An endpoint that is failing (its last
   * attempt failed) gets one request at a time until one succeeds, and the failing endpoints of
   * a seller never take its last free slot (when its cap is above 1), so that its dead endpoints
   * leave requests to its healthy ones. (Counted as this statement sees them: workers claiming
   * at the very same moment may each take up to a cap.)
   */
  async claimDue(
    limit: number,
    leaseMs: number,
    caps: { perEndpoint: number; perSeller: number },
  ): Promise<ClaimedDelivery[]> {
    const [rows]: [ClaimedDelivery[], number] = await this.dataSource.query(
      `WITH in_flight AS (
         SELECT d.endpoint_id, e.seller_id, count(*)::int AS n
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.locked_until IS NOT NULL AND d.locked_until > now() GROUP BY d.endpoint_id, e.seller_id
       ), seller_in_flight AS (
         SELECT seller_id, sum(n)::int AS n FROM in_flight GROUP BY seller_id
       ), due AS (
         SELECT d.id, d.endpoint_id, e.seller_id, d.next_attempt_at, c.failing, c.endpoint_free, c.seller_cap
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         LEFT JOIN in_flight f ON f.endpoint_id = d.endpoint_id
         LEFT JOIN seller_in_flight s ON s.seller_id = e.seller_id
         CROSS JOIN LATERAL (
           -- A failing endpoint: one request at a time, and never its seller's last free one.
           SELECT e.failing_since IS NOT NULL AS failing,
             CASE WHEN e.failing_since IS NULL THEN $2 ELSE 1 END - coalesce(f.n, 0) AS endpoint_free,
             CASE WHEN e.failing_since IS NULL THEN $4 ELSE greatest($4 - 1, 1) END AS seller_cap) c
         WHERE d.status = 'pending' AND d.next_attempt_at <= now()
           AND (d.locked_until IS NULL OR d.locked_until <= now())
           AND c.endpoint_free > 0 AND coalesce(s.n, 0) < c.seller_cap
         ORDER BY d.next_attempt_at LIMIT $1 * 4
       ), within_endpoint AS (
         SELECT r.id, r.seller_id, r.next_attempt_at, r.failing, r.seller_cap FROM (
           SELECT due.*, row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at) AS place
           FROM due
         ) r
         WHERE r.place <= r.endpoint_free
       ), ranked AS (
         -- A seller's healthy endpoints first: its failing ones take what is left.
         SELECT r.id FROM (
           SELECT w.*, row_number() OVER (PARTITION BY w.seller_id ORDER BY w.failing, w.next_attempt_at) AS place
           FROM within_endpoint w
         ) r LEFT JOIN seller_in_flight s ON s.seller_id = r.seller_id
         WHERE r.place + coalesce(s.n, 0) <= r.seller_cap
         ORDER BY r.next_attempt_at LIMIT $1
       ), chosen AS (
         SELECT d.id FROM webhook_deliveries d
         WHERE d.id IN (SELECT id FROM ranked) AND d.status = 'pending'
           AND (d.locked_until IS NULL OR d.locked_until <= now())
         FOR UPDATE SKIP LOCKED
       )
       UPDATE webhook_deliveries d
       SET attempts = d.attempts + 1, locked_until = now() + make_interval(secs => $3::float8 / 1000)
       FROM webhook_endpoints e, outbox_events o
       WHERE d.id IN (SELECT id FROM chosen) AND e.id = d.endpoint_id AND o.id = d.event_id
         AND e.active AND e.deleted_at IS NULL
       RETURNING d.id, d.endpoint_id, d.attempts AS attempt, d.schedule_step, d.resume_at, e.url,
         ARRAY[e.secret] || ARRAY(SELECT r.secret FROM webhook_retired_secrets r
                                  WHERE r.endpoint_id = e.id AND r.expires_at > now() ORDER BY r.expires_at DESC) AS secrets,
         o.id AS event_id, o.type AS event_type, ${ISO('o.created_at')} AS event_created_at, o.data AS event_data`,
      [limit, caps.perEndpoint, leaseMs, caps.perSeller],
    );
    return rows;
  }

  /**
   * Records a batch of attempts and their deliveries' next state, in one statement, with a
   * retry or replay asked for meanwhile (retryNow, replay; `singleAttemptStep` as retryNow's). A
   * delivery whose claim was lost (another worker took it after the lease ended) keeps the other
   * worker's state; its attempt row is kept either way. Also keeps each endpoint's
   * failure streak (a success ends it, the first failure starts it; read under the row's lock)
   * and answers, for each delivery updated, its status now and when its endpoint's streak began
   * before this batch (as this statement saw it).
   */
  async completeAttempts(
    records: AttemptRecord[],
    singleAttemptStep: number,
  ): Promise<Array<{ deliveryId: string; endpointId: string; status: string; failingSince: Date | null }>> {
    const column = <K extends keyof AttemptRecord>(key: K) => records.map((r) => r[key]);
    const rows: Array<{ id: string; endpoint_id: string; status_now: string; failing_since: Date | null }> =
      await this.dataSource.query(
        `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[],
                              $8::int[], $9::float8[], $10::text[])
           AS t(delivery_id, number, started_at, duration_ms, response_status, error, status, schedule_step, delay_ms,
                response_body)
       ), attempt AS (
         INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_ms, response_status, error)
         SELECT delivery_id, number, started_at, duration_ms, response_status, error FROM input
         ON CONFLICT (delivery_id, number) DO NOTHING
       ), delivery AS (
         -- A retry asked for during the attempt: due now, the automatic attempt put aside when one
         -- is left (retryNow), a single attempt when the delivery would have ended; a replay: a
         -- fresh schedule. Otherwise the attempt's outcome.
         UPDATE webhook_deliveries d SET
           status = CASE WHEN d.resend_requested IS NULL THEN i.status ELSE 'pending' END,
           schedule_step = CASE WHEN d.resend_requested = 'replay' THEN 0
                                WHEN d.resend_requested = 'retry' AND i.status <> 'pending' THEN $11
                                ELSE i.schedule_step END,
           next_attempt_at = CASE WHEN d.resend_requested IS NOT NULL THEN now()
                                  WHEN i.status = 'pending' THEN now() + make_interval(secs => i.delay_ms / 1000) END,
           resume_at = CASE WHEN d.resend_requested = 'retry' AND i.status = 'pending'
                            THEN now() + make_interval(secs => i.delay_ms / 1000) END,
           resend_requested = NULL,
           locked_until = NULL, last_attempt_at = i.started_at, last_response_status = i.response_status,
           last_response_body = i.response_body, last_error = i.error, updated_at = now()
         FROM input i
         WHERE d.id = i.delivery_id AND d.attempts = i.number AND d.status = 'pending'
         RETURNING d.id, d.endpoint_id, i.status, i.started_at, d.status AS status_now
       ), endpoint AS (
         SELECT e.id, e.failing_since FROM webhook_endpoints e WHERE e.id IN (SELECT endpoint_id FROM delivery)
       ), outcome AS (
         SELECT endpoint_id, bool_or(status = 'succeeded') AS ok, min(started_at) AS first_failure
         FROM delivery GROUP BY endpoint_id
       ), streak AS (
         UPDATE webhook_endpoints e SET failing_since = CASE WHEN o.ok THEN NULL ELSE o.first_failure END
         FROM outcome o
         WHERE e.id = o.endpoint_id
           AND CASE WHEN o.ok THEN e.failing_since IS NOT NULL ELSE e.failing_since IS NULL END
       )
       SELECT d.id, d.endpoint_id, d.status_now, p.failing_since FROM delivery d JOIN endpoint p ON p.id = d.endpoint_id`,
        [
          column('deliveryId'),
          column('attempt'),
          column('startedAt'),
          column('durationMs'),
          column('responseStatus'),
          column('error'),
          column('status'),
          column('scheduleStep'),
          column('delayMs'),
          column('responseBody'),
          singleAttemptStep,
        ],
      );
    return rows.map((r) => ({
      deliveryId: r.id,
      endpointId: r.endpoint_id,
      status: r.status_now,
      failingSince: r.failing_since,
    }));
  }

  /**
   * When the next pending delivery falls due or a lease ends (the worker's alarm clock); null when
   * none. Deliveries due at `claimedFrom` (when the claim that found nothing began) are left out:
   * that claim left them because their endpoint or seller is at its cap, and they wait for an
   * attempt to end (its worker claims again then) or a lease to run out, not for a timer of 0 ms
   * that would claim nothing again and again. One that fell due since is counted, even if it is
   * due by now: left out, it would wait for the idle check instead of its time. (`claimedFrom` is
   * the worker's clock: a skew with the database's clock moves that line by as much, which costs
   * at worst a few claims that find nothing, or a wait for the idle check, within the skew.)
   */
  async nextWakeUp(claimedFrom: Date): Promise<Date | null> {
    const [row]: Array<{ at: Date | null }> = await this.dataSource.query(
      `SELECT least(
         (SELECT min(next_attempt_at) FROM webhook_deliveries
           WHERE status = 'pending' AND (locked_until IS NULL OR locked_until <= now()) AND next_attempt_at > $1),
         (SELECT min(locked_until) FROM webhook_deliveries WHERE locked_until > now())
       ) AS at`,
      [claimedFrom],
    );
    return row.at;
  }

  /** Deletes up to `batch` deliveries (with their attempts) and dispatched events past their retention. */
  async purge(deliveryDays: number, eventDays: number, batch: number): Promise<{ deliveries: number; events: number }> {
    const [, deliveries]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE created_at < now() - make_interval(days => $1) LIMIT $2)`,
      [deliveryDays, batch],
    );
    const [, events]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM outbox_events WHERE id IN (
         SELECT id FROM outbox_events WHERE created_at < now() - make_interval(days => $1) AND dispatched_at IS NOT NULL LIMIT $2)`,
      [eventDays, batch],
    );
    return { deliveries, events };
  }
}
