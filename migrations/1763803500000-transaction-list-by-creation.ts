import { MigrationInterface, QueryRunner } from 'typeorm';

const FILTERED = ['status', 'payment_type', 'card_brand', 'entry_mode', 'source'];

/**
 * The transaction list is ordered by creation time (`created_at`, then `seq` for rows created at
 * the same instant) instead of insertion order (`seq`), and its indexes follow: a page, filtered
 * by one of the list's equality filters or not, and with a range of creation dates or not, is one
 * index range scan. Ordered by `seq`, a page of a creation-date range months back walked the
 * seller's index from the newest row down to the range: over a second at a million rows.
 */
export class TransactionListByCreation1763803500000 implements MigrationInterface {
  name = 'TransactionListByCreation1763803500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX transactions_seller_created ON transactions (seller_id, created_at, seq)`);
    for (const column of FILTERED) {
      await q.query(
        `CREATE INDEX transactions_seller_${column}_created ON transactions (seller_id, ${column}, created_at, seq)`,
      );
      await q.query(`DROP INDEX transactions_seller_${column}_seq`);
    }
    await q.query(`DROP INDEX transactions_seller_seq`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX transactions_seller_seq ON transactions (seller_id, seq)`);
    for (const column of FILTERED) {
      await q.query(`CREATE INDEX transactions_seller_${column}_seq ON transactions (seller_id, ${column}, seq)`);
      await q.query(`DROP INDEX transactions_seller_${column}_created`);
    }
    await q.query(`DROP INDEX transactions_seller_created`);
  }
}
