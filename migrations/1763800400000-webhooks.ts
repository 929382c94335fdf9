import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (API.md section 5): a seller's endpoints, one delivery per (endpoint, event) and
 * every attempt of it. Committed outbox events wake the workers at once (NOTIFY); the
 * outbox gets the indexes of the seller's event list and of the retention job.
 */
export class Webhooks1763800400000 implements MigrationInterface {
  name = 'Webhooks1763800400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id                         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq                        bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id                  uuid        NOT NULL REFERENCES sellers (id),
        url                        text        NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
        events                     text[]      NOT NULL CHECK (cardinality(events) > 0),
        description                text        NOT NULL DEFAULT '',
        active                     boolean     NOT NULL DEFAULT true,
        secret                     text        NOT NULL,
        previous_secret            text,
        previous_secret_expires_at timestamptz,
        disabled_reason            text,
        failing_since              timestamptz,
        created_at                 timestamptz NOT NULL DEFAULT now(),
        updated_at                 timestamptz NOT NULL DEFAULT now(),
        deleted_at                 timestamptz,
        CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
      )`);
    await q.query(
      `CREATE INDEX webhook_endpoints_by_seller ON webhook_endpoints (seller_id, seq) WHERE deleted_at IS NULL`,
    );

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id                   uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq                  bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        endpoint_id          uuid        NOT NULL REFERENCES webhook_endpoints (id),
        event_id             uuid        NOT NULL REFERENCES outbox_events (id) ON DELETE CASCADE,
        event_type           text        NOT NULL,
        status               text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts             integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        schedule_step        integer     NOT NULL DEFAULT 0 CHECK (schedule_step >= 0),
        next_attempt_at      timestamptz,
        locked_until         timestamptz,
        last_attempt_at      timestamptz,
        last_response_status integer,
        last_response_body   text,
        last_error           text,
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        UNIQUE (endpoint_id, event_id),
        CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (endpoint_id) WHERE locked_until IS NOT NULL`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, seq)`);
    await q.query(`CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id)`);
    await q.query(`CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at)`);

    await q.query(`
      CREATE TABLE webhook_attempts (
        id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        delivery_id     uuid        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        number          integer     NOT NULL CHECK (number > 0),
        started_at      timestamptz NOT NULL,
        duration_ms     integer     NOT NULL CHECK (duration_ms >= 0),
        response_status integer,
        error           text,
        UNIQUE (delivery_id, number)
      )`);

    await q.query(`CREATE INDEX outbox_events_by_seller ON outbox_events (seller_id, seq)`);
    await q.query(`CREATE INDEX outbox_events_by_seller_type ON outbox_events (seller_id, type, seq)`);
    await q.query(`CREATE INDEX outbox_events_created ON outbox_events (created_at)`);
    // Notifications are sent at commit, once per transaction: workers wake when events exist.
    await q.query(`
      CREATE FUNCTION outbox_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events', '');
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events FOR EACH STATEMENT EXECUTE FUNCTION outbox_events_notify()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER outbox_events_notify ON outbox_events`);
    await q.query(`DROP FUNCTION outbox_events_notify()`);
    await q.query(`DROP INDEX outbox_events_created`);
    await q.query(`DROP INDEX outbox_events_by_seller_type`);
    await q.query(`DROP INDEX outbox_events_by_seller`);
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_endpoints`);
  }
}
