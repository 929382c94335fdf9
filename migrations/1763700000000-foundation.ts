import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        scope           text        NOT NULL,
        method          text        NOT NULL,
        path            text        NOT NULL,
        key             text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
        request_hash    text        NOT NULL,
        status          text        NOT NULL CHECK (status IN ('in_progress', 'completed')),
        response_status integer,
        response_body   jsonb,
        created_at      timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz NOT NULL,
        PRIMARY KEY (scope, method, path, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at)`);

    await q.query(`
      CREATE TABLE outbox_events (
        id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq           bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        type          text        NOT NULL,
        seller_id     uuid,
        data          jsonb       NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        dispatched_at timestamptz
      )`);
    await q.query(`CREATE INDEX outbox_events_pending ON outbox_events (seq) WHERE dispatched_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox_events`);
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
