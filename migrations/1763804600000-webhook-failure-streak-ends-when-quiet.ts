import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An endpoint's failure streak (`failing_since`) also keeps when its last failed attempt was
 * (`last_failure_at`), so that a quiet spell, with nothing sent to the endpoint, ends the streak:
 * an endpoint that failed weeks ago and fails once today has not been failing for 5 days.
 *
 * Endpoints failing now get the time of their latest attempt (no attempt has succeeded since their
 * streak began). While builds with and without this column serve side by side, the older one does
 * not keep it: a streak it leaves without `last_failure_at` starts again at the next failure.
 */
export class WebhookFailureStreakEndsWhenQuiet1763804600000 implements MigrationInterface {
  name = 'WebhookFailureStreakEndsWhenQuiet1763804600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_endpoints ADD COLUMN last_failure_at timestamptz`);
    await q.query(`
      UPDATE webhook_endpoints e SET last_failure_at = greatest(e.failing_since,
        (SELECT max(d.last_attempt_at) FROM webhook_deliveries d WHERE d.endpoint_id = e.id))
      WHERE e.failing_since IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_endpoints DROP COLUMN last_failure_at`);
  }
}
