import { MigrationInterface, QueryRunner } from 'typeorm';

/** The transaction list's equality filters, each of which had an index in insertion order. */
const FILTERED = ['status', 'payment_type', 'card_brand', 'entry_mode', 'source'];

/** The indexes of lists in insertion order (`seq`), on the tables every charge and posting writes. */
const INDEXES: Array<[name: string, table: string, columns: string]> = [
  ['transactions_seller_seq', 'transactions', 'seller_id, seq'],
  ...FILTERED.map((column): [string, string, string] => [
    `transactions_seller_${column}_seq`,
    'transactions',
    `seller_id, ${column}, seq`,
  ]),
  ['outbox_events_by_seller', 'outbox_events', 'seller_id, seq'],
  ['outbox_events_by_seller_type', 'outbox_events', 'seller_id, type, seq'],
];

/**
 * The second half of 1763803500000 (transaction list) and 1763803800000 (events feed): both
 * lists are read in creation order since those migrations, through the indexes they built, and
 * the insertion-order indexes they kept for builds still running during a rolling deploy are
 * read by no query of this build. Each of them cost every write: a charge wrote six of them
 * twice (its insert, and its approval, whose new status makes a new row version in every index
 * of the table), a ledger posting two per event.
 *
 * Dropped CONCURRENTLY, outside a transaction, so that writes go on meanwhile; `down` builds them
 * again the same way, for a build that lists in insertion order.
 */
export class DropInsertionOrderIndexes1763803900000 implements MigrationInterface {
  name = 'DropInsertionOrderIndexes1763803900000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const [name] of INDEXES) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [name, table, columns] of INDEXES) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${name} ON ${table} (${columns})`);
    }
  }
}
