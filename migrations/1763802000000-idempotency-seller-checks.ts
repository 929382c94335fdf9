import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The checks on a seller (known from the body or a record, not the route) that the first request
 * of an Idempotency-Key passed: a replay makes them again before it answers, so that a caller who
 * has lost the access since is refused instead of answered (API.md section 1). Null: none.
 */
export class IdempotencySellerChecks1763802000000 implements MigrationInterface {
  name = 'IdempotencySellerChecks1763802000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ADD COLUMN seller_checks jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys DROP COLUMN seller_checks`);
  }
}
