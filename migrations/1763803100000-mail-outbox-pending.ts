import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The mails still to be delivered, by age: the sweep that sends again those whose delivery job
 * gave up, and gives up those not delivered within a day, reads them without scanning the mails
 * already sent.
 */
export class MailOutboxPending1763803100000 implements MigrationInterface {
  name = 'MailOutboxPending1763803100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX mail_outbox_pending ON mail_outbox (created_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX mail_outbox_pending`);
  }
}
