import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The charges left unresolved, by age (card charges still pending, pix and boleto ones still
 * without their payment instructions): the reconciler, which reads them every minute oldest
 * first, in batches, reads them without scanning the settled ones or the pix and boleto charges
 * waiting for their payment.
 *
 * Built CONCURRENTLY, outside a transaction, so that charges go on being written while it is
 * built; an index left invalid by an interrupted build is dropped and built again on the next run.
 */
export class UnresolvedChargesByAge1763803400000 implements MigrationInterface {
  name = 'UnresolvedChargesByAge1763803400000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_unresolved_age`);
    await q.query(
      `CREATE INDEX CONCURRENTLY transactions_unresolved_age ON transactions (created_at, id)
        WHERE status = 'pending' AND (payment_type IN ('credit', 'debit') OR processor_reference IS NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS transactions_unresolved_age`);
  }
}
