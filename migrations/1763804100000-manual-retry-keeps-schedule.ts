import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A manual retry of a pending webhook delivery (`POST …/deliveries/{id}/retry/`) is one attempt
 * more, now: `resume_at` keeps the automatic attempt it put aside, so that a failed manual
 * attempt goes back to that time and step of the retry schedule instead of using a step up
 * (seven clicks used to end all retries). Null when no manual attempt is waiting or running.
 * A build without this column keeps retrying as before during a rolling deploy.
 */
export class ManualRetryKeepsSchedule1763804100000 implements MigrationInterface {
  name = 'ManualRetryKeepsSchedule1763804100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN resume_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN resume_at`);
  }
}
