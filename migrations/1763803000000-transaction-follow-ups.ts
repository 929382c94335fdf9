import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the service follows up on a charge after its request has been answered:
 *
 * - `payable_until`: until when a pending pix or boleto charge can be paid (a pix until its
 *   `expires_at`, a boleto until the end of its due date, UTC). A confirmation after it is refused,
 *   and a charge of the API (or the demo seed) still unpaid then is voided by a job
 *   (`transactions_unpaid_due`); a checkout's or a subscription's charges expire with them.
 * - `processor_void_token`: the void the processor has still to acknowledge (the token of the
 *   latest void job queued; null once acknowledged). A void unacknowledged long after it was
 *   voided is sent again by a sweep (`transactions_void_unacknowledged`), so that a lost or
 *   exhausted void job never leaves a customer charged. Voids of the last 30 days may still have
 *   jobs retrying or out of retries: they are marked unacknowledged (voiding again is harmless).
 */
export class TransactionFollowUps1763803000000 implements MigrationInterface {
  name = 'TransactionFollowUps1763803000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE transactions ADD COLUMN payable_until timestamptz, ADD COLUMN processor_void_token uuid`,
    );
    await q.query(
      `UPDATE transactions
          SET payable_until = CASE WHEN pix IS NOT NULL THEN (pix->>'expires_at')::timestamptz
                                   ELSE ((boleto->>'due_date')::date + 1)::timestamp AT TIME ZONE 'UTC' END
        WHERE status = 'pending' AND (pix IS NOT NULL OR boleto IS NOT NULL)`,
    );
    await q.query(
      `UPDATE transactions SET processor_void_token = gen_random_uuid()
        WHERE status = 'voided' AND voided_at > now() - interval '30 days'`,
    );
    await q.query(
      `CREATE INDEX transactions_unpaid_due ON transactions (payable_until, id)
        WHERE status = 'pending' AND payable_until IS NOT NULL AND source IN ('api', 'seed')`,
    );
    await q.query(
      `CREATE INDEX transactions_void_unacknowledged ON transactions (voided_at, id)
        WHERE status = 'voided' AND processor_void_token IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX transactions_void_unacknowledged`);
    await q.query(`DROP INDEX transactions_unpaid_due`);
    await q.query(`ALTER TABLE transactions DROP COLUMN processor_void_token, DROP COLUMN payable_until`);
  }
}
