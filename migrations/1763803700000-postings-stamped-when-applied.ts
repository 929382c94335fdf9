import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A posting is stamped when it is applied to its account (`clock_timestamp()`, taken by
 * ledger_post after it locked the account), no longer when its database transaction began
 * (`now()`). An account's postings are applied one after another under its row lock, so their
 * `created_at` now follows their order in the statement (`account_line`): a statement window of
 * creation dates is an unbroken run of postings whose `balance_after` chain adds up. Stamped at
 * the start of its transaction, a posting whose request began first but locked the account last
 * fell outside a window holding the postings around it. A running transaction's postings are
 * still stamped after it began, which the statement's visibility horizon relies on.
 */
export class PostingsStampedWhenApplied1763803700000 implements MigrationInterface {
  name = 'PostingsStampedWhenApplied1763803700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ledger_lines ALTER COLUMN created_at SET DEFAULT clock_timestamp()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE ledger_lines ALTER COLUMN created_at SET DEFAULT now()`);
  }
}
