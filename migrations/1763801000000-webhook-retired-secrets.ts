import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every secret an endpoint retired keeps signing for its own 24 hours (API.md section 5: "the old
 * secret keeps signing too for 24 h"), not only the last one: a second rotation within the day
 * used to drop the first secret at once, and a receiver still on it stopped verifying. Retired
 * secrets move from the endpoint's `previous_secret` columns to a table of their own.
 */
export class WebhookRetiredSecrets1763801000000 implements MigrationInterface {
  name = 'WebhookRetiredSecrets1763801000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_retired_secrets (
        endpoint_id uuid        NOT NULL REFERENCES webhook_endpoints (id),
        secret      text        NOT NULL,
        expires_at  timestamptz NOT NULL,
        PRIMARY KEY (endpoint_id, secret)
      )`);
    await q.query(`
      INSERT INTO webhook_retired_secrets (endpoint_id, secret, expires_at)
      SELECT id, previous_secret, previous_secret_expires_at FROM webhook_endpoints
      WHERE previous_secret_expires_at > now()`);
    await q.query(`ALTER TABLE webhook_endpoints DROP COLUMN previous_secret, DROP COLUMN previous_secret_expires_at`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text, ADD COLUMN previous_secret_expires_at timestamptz`,
    );
    await q.query(`
      UPDATE webhook_endpoints e SET previous_secret = r.secret, previous_secret_expires_at = r.expires_at
      FROM (SELECT DISTINCT ON (endpoint_id) endpoint_id, secret, expires_at FROM webhook_retired_secrets
            ORDER BY endpoint_id, expires_at DESC) r
      WHERE r.endpoint_id = e.id`);
    await q.query(
      `ALTER TABLE webhook_endpoints ADD CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))`,
    );
    await q.query(`DROP TABLE webhook_retired_secrets`);
  }
}
