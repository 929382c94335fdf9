import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An order's items keep the name their ticket type had when the order was placed, as they keep
 * its price: a ticket type renamed later does not rename what a buyer bought. Orders placed
 * before this migration take the name their ticket type has now (the only one known).
 */
export class OrderItemNames1763803300000 implements MigrationInterface {
  name = 'OrderItemNames1763803300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_order_items ADD COLUMN name text`);
    await q.query(`UPDATE event_order_items i SET name = t.name FROM ticket_types t WHERE t.id = i.ticket_type_id`);
    await q.query(`ALTER TABLE event_order_items ALTER COLUMN name SET NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_order_items DROP COLUMN name`);
  }
}
