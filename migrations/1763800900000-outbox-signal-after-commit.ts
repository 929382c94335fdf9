import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox events no longer NOTIFY from a trigger inside the writing transaction: a NOTIFY there
 * serialises the commits of all notifying transactions on one database-wide lock. The service
 * signals the workers after the commit instead (src/webhooks/outbox-signal.ts).
 */
export class OutboxSignalAfterCommit1763800900000 implements MigrationInterface {
  name = 'OutboxSignalAfterCommit1763800900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER outbox_events_notify ON outbox_events`);
    await q.query(`DROP FUNCTION outbox_events_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
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
}
