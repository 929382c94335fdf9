import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The list's amount filters (`amount_min`, `amount_max`) get an index, so that a page of a range
 * few transactions fall in reads those transactions, not the seller's whole history in creation
 * order, dropping the rest. (The list asks PostgreSQL to plan such a page with its values each time:
 * PLANNED_PER_EXECUTION in TransactionsRepository.list.) Built CONCURRENTLY, outside a transaction,
 * so that charges go on being written meanwhile. An index left invalid by an interrupted build is
 * dropped and built again on the next run; a valid one (the run stopped after building it) stays.
 */
export class TransactionListByAmount1763804400000 implements MigrationInterface {
  name = 'TransactionListByAmount1763804400000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const [invalid] = await q.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'transactions_seller_amount' AND c.relnamespace = current_schema()::regnamespace
          AND NOT i.indisvalid`,
    );
    if (invalid) await q.query(`DROP INDEX CONCURRENTLY transactions_seller_amount`);
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS transactions_seller_amount
         ON transactions (seller_id, amount, created_at, seq)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_seller_amount`);
  }
}
