import { MigrationInterface, QueryRunner } from 'typeorm';

/** The list's equality filters: each has its index, so that a filtered page is one range scan too. */
const FILTERED = ['status', 'payment_type', 'card_brand', 'entry_mode', 'source'];

/**
 * The transaction list is ordered by creation time (`created_at`, then `seq` for rows created at
 * the same instant) instead of insertion order (`seq`), and gets indexes in that order: a page,
 * filtered by one of the list's equality filters or not, and with a range of creation dates or
 * not, is one index range scan. Ordered by `seq`, a page of a creation-date range months back
 * walked the seller's index from the newest row down to the range: over a second at a million rows.
 *
 * Built CONCURRENTLY, outside a transaction, so that charges go on being written while they are
 * built; an index left invalid by an interrupted build is dropped and built again on the next run.
 * The `seq` indexes stay while builds that list by `seq` may still be running (a rolling
 * deploy); a later migration drops them.
 */
export class TransactionListByCreation1763803500000 implements MigrationInterface {
  name = 'TransactionListByCreation1763803500000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const [name, columns] of [
      ['transactions_seller_created', 'seller_id, created_at, seq'],
      ...FILTERED.map((column) => [`transactions_seller_${column}_created`, `seller_id, ${column}, created_at, seq`]),
    ]) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      await q.query(`CREATE INDEX CONCURRENTLY ${name} ON transactions (${columns})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_seller_created`);
    for (const column of FILTERED)
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_seller_${column}_created`);
  }
}
