import { MigrationInterface, QueryRunner } from 'typeorm';

/** The insertion-order (`seq`) indexes of the events feed, which 1763803800000 kept for a rolling deploy. */
const EVENT_FEED_INDEXES: Array<[name: string, columns: string]> = [
  ['outbox_events_by_seller', 'seller_id, seq'],
  ['outbox_events_by_seller_type', 'seller_id, type, seq'],
];

/**
 * Insertion-order transaction list indexes that 1763803500000 drops, but that a database made by
 * a build which had rewritten that migration to keep them may still have.
 */
const LEFT_TRANSACTION_INDEXES = [
  'transactions_seller_seq',
  ...['status', 'payment_type', 'card_brand', 'entry_mode', 'source'].map(
    (column) => `transactions_seller_${column}_seq`,
  ),
];

/**
 * The second half of 1763803800000: the events feed is read in creation order through the
 * indexes it built, and the insertion-order indexes it kept for builds still running during a
 * rolling deploy are read by no query of this build. Each cost every event written (two per
 * ledger posting, two per charge). Insertion-order indexes of the transaction list left on a
 * database (see LEFT_TRANSACTION_INDEXES) go too; elsewhere 1763803500000 dropped them already.
 *
 * Dropped CONCURRENTLY, outside a transaction, so that writes go on meanwhile; `down` builds
 * the events feed's again the same way, for a build that lists events in insertion order.
 */
export class DropInsertionOrderIndexes1763803900000 implements MigrationInterface {
  name = 'DropInsertionOrderIndexes1763803900000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const name of [...EVENT_FEED_INDEXES.map(([index]) => index), ...LEFT_TRANSACTION_INDEXES]) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name, columns] of EVENT_FEED_INDEXES) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${name} ON outbox_events (${columns})`);
    }
  }
}
