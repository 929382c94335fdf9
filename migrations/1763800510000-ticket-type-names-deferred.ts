import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A PATCH may swap the names of two ticket types of an event (Pista ↔ VIP): the service checks
 * that the final names are unique, and the database checks it at commit rather than after each
 * renamed row (which refused a valid swap halfway).
 */
export class TicketTypeNamesDeferred1763800510000 implements MigrationInterface {
  name = 'TicketTypeNamesDeferred1763800510000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ticket_types DROP CONSTRAINT ticket_types_event_id_name_key`);
    await q.query(
      `ALTER TABLE ticket_types ADD CONSTRAINT ticket_types_event_id_name_key UNIQUE (event_id, name) DEFERRABLE INITIALLY DEFERRED`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ticket_types DROP CONSTRAINT ticket_types_event_id_name_key`);
    await q.query(`ALTER TABLE ticket_types ADD CONSTRAINT ticket_types_event_id_name_key UNIQUE (event_id, name)`);
  }
}
