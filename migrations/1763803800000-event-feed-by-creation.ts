import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The seller's events feed (`GET /integrations/webhooks/events/`) is ordered by creation time
 * (`created_at`, then `seq` for events of the same instant) instead of insertion order (`seq`),
 * and gets indexes in that order, with and without its `type` filter. An event is stamped when
 * its database transaction began, so insertion order is not creation order: a client that read
 * a page in `seq` order and then polled with `created_after=<the last created_at it saw>` missed
 * the events of that page's last instant that had not fitted in it, stamped earlier.
 *
 * Built CONCURRENTLY, outside a transaction, so that events go on being written while they are
 * built; an index left invalid by an interrupted build is dropped and built again on the next
 * run. The `seq` indexes stay while builds that list by `seq` may still be running (a rolling
 * deploy); a later migration drops the ones nothing else uses.
 */
export class EventFeedByCreation1763803800000 implements MigrationInterface {
  name = 'EventFeedByCreation1763803800000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns] of [
      ['outbox_events_seller_created', 'seller_id, created_at, seq'],
      ['outbox_events_seller_type_created', 'seller_id, type, created_at, seq'],
    ]) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${name} ON outbox_events (${columns})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS outbox_events_seller_created`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS outbox_events_seller_type_created`);
  }
}
