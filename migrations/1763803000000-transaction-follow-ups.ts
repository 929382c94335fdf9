import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the service follows up on a charge after its request has been answered:
 *
 * - `payable_until`: until when a pending pix or boleto charge can be paid (a pix until its
 *   `expires_at`, a boleto until the end of its due date, UTC). A confirmation after it is refused,
 *   and an API charge still unpaid then is voided by a job (`transactions_unpaid_due`).
 * - `processor_voided_at`: when the processor acknowledged the void of a voided charge. A void whose
 *   acknowledgement is missing long after it was queued is sent again by a sweep
 *   (`transactions_void_unacknowledged`), so that a lost or exhausted void job never leaves a
 *   customer charged. Voids made before this migration had their jobs run and are taken as
 *   acknowledged at their `voided_at`.
 */
export class TransactionFollowUps1763803000000 implements MigrationInterface {
  name = 'TransactionFollowUps1763803000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE transactions ADD COLUMN payable_until timestamptz, ADD COLUMN processor_voided_at timestamptz`,
    );
    await q.query(
      `UPDATE transactions
          SET payable_until = CASE WHEN pix IS NOT NULL THEN (pix->>'expires_at')::timestamptz
                                   ELSE ((boleto->>'due_date')::date + 1)::timestamp AT TIME ZONE 'UTC' END
        WHERE status = 'pending' AND (pix IS NOT NULL OR boleto IS NOT NULL)`,
    );
    await q.query(`UPDATE transactions SET processor_voided_at = voided_at WHERE status = 'voided'`);
    await q.query(
      `CREATE INDEX transactions_unpaid_due ON transactions (payable_until)
        WHERE status = 'pending' AND payable_until IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX transactions_void_unacknowledged ON transactions (voided_at, id)
        WHERE status = 'voided' AND processor_voided_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_void_unacknowledged`);
    await q.query(`DROP INDEX transactions_unpaid_due`);
    await q.query(`ALTER TABLE transactions DROP COLUMN processor_voided_at, DROP COLUMN payable_until`);
  }
}
