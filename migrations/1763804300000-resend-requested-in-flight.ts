import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A manual retry or a replay of a webhook delivery whose attempt is in flight is remembered in
 * `resend_requested` ('retry' or 'replay') and applied when that attempt is recorded: the
 * delivery is due again at once, within the concurrency caps (the in-flight attempt keeps its
 * lease and is counted until it ends). It used to be overwritten by that attempt's outcome.
 * A build without this column ignores it during a rolling deploy (the request is lost, as before).
 */
export class ResendRequestedInFlight1763804300000 implements MigrationInterface {
  name = 'ResendRequestedInFlight1763804300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_deliveries ADD COLUMN resend_requested text CHECK (resend_requested IN ('retry', 'replay'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN resend_requested`);
  }
}
