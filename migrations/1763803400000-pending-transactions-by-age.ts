import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pending transactions, by age: the reconciler, which every minute reads each charge left
 * unresolved (oldest first, in batches), reads them without scanning the settled ones.
 */
export class PendingTransactionsByAge1763803400000 implements MigrationInterface {
  name = 'PendingTransactionsByAge1763803400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX transactions_pending_age ON transactions (created_at, id) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_pending_age`);
  }
}
