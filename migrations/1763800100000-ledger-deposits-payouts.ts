import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deposits and payouts of virtual accounts (API.md section 9), and one current schema for every
 * database, whichever build made it: migrations 1763700300000 (transactions) and 1763700400000
 * (ledger) were edited after landing, so a database may hold any of their earlier versions. Each
 * step here is written to bring any of them to the current schema (IF EXISTS / IF NOT EXISTS /
 * CREATE OR REPLACE). The ledger's functions and triggers live in 1763800100001-ledger-functions.sql.
 *
 * Money enters only through a deposit that really arrived (pix, boleto confirmed by the processor;
 * manual by a superuser) and leaves only through a payout (payment, external transfer), which
 * either completes or fails with a reversing entry. Deposits and payouts posted before this
 * migration are recorded as completed (manual deposits, completed payouts).
 */
export class LedgerDepositsPayouts1763800100000 implements MigrationInterface {
  name = 'LedgerDepositsPayouts1763800100000';

  async up(q: QueryRunner): Promise<void> {
    // The earliest ledger numbered entries and lines with a `seq` column the current one does without.
    await q.query(`ALTER TABLE journal_entries DROP COLUMN IF EXISTS seq`);
    await q.query(`ALTER TABLE ledger_lines DROP COLUMN IF EXISTS seq`);
    await q.query(`
      DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'ledger_accounts_balance_limit') THEN
          ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_balance_limit
            CHECK (kind = 'system' OR balance <= 100000000000000);
        END IF;
      END $$`);
    // Each equality filter of the transaction list has its index (added to 1763700300000 after it landed).
    for (const column of ['status', 'payment_type', 'card_brand', 'entry_mode', 'source']) {
      await q.query(
        `CREATE INDEX IF NOT EXISTS transactions_seller_${column}_seq ON transactions (seller_id, ${column}, seq)`,
      );
    }
    await q.query(
      `CREATE INDEX IF NOT EXISTS transactions_seller_reference ON transactions (seller_id, reference) WHERE reference IS NOT NULL`,
    );

    // A failed payout is given back by a reversal entry, posted to the account as a `reversal` line.
    await q.query(`ALTER TABLE journal_entries DROP CONSTRAINT journal_entries_kind_check`);
    await q.query(`ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_kind_check
      CHECK (kind IN ('deposit', 'payment', 'transfer', 'reversal'))`);
    await q.query(`ALTER TABLE ledger_lines DROP CONSTRAINT ledger_lines_type_check`);
    await q.query(`ALTER TABLE ledger_lines ADD CONSTRAINT ledger_lines_type_check
      CHECK (type IN ('deposit', 'payment', 'transfer_out', 'transfer_in', 'reversal', 'external'))`);

    await q.query(`
      CREATE TABLE deposits (
        id                  uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq                 bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id           uuid        NOT NULL REFERENCES sellers (id),
        account_id          uuid        NOT NULL REFERENCES ledger_accounts (id),
        method              text        NOT NULL CHECK (method IN ('pix', 'boleto', 'manual')),
        status              text        NOT NULL CHECK (status IN ('pending', 'completed', 'expired')),
        amount              bigint      NOT NULL CHECK (amount > 0),
        description         text,
        reason              text,
        external_reference  text,
        pix                 jsonb,
        boleto              jsonb,
        expires_at          timestamptz,
        -- One completion per deposit: the entry that posted it, at most one, never another deposit's.
        entry_id            uuid        UNIQUE REFERENCES journal_entries (id),
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        completed_at        timestamptz,
        expired_at          timestamptz,
        CHECK ((method = 'manual') = (reason IS NOT NULL)),
        CHECK ((method = 'pix') = (pix IS NOT NULL)),
        CHECK ((method = 'boleto') = (boleto IS NOT NULL)),
        CHECK ((method = 'manual') = (expires_at IS NULL)),
        CHECK (method <> 'manual' OR status = 'completed'),
        CHECK ((status = 'completed') = (entry_id IS NOT NULL)),
        CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
        CHECK ((status = 'expired') = (expired_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX deposits_account_seq ON deposits (account_id, seq)`);
    await q.query(`CREATE INDEX deposits_pending_expiry ON deposits (expires_at) WHERE status = 'pending'`);

    await q.query(`
      CREATE TABLE payouts (
        id                   uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seller_id            uuid        NOT NULL REFERENCES sellers (id),
        account_id           uuid        NOT NULL REFERENCES ledger_accounts (id),
        -- The entry that took the money out (reserved at once); at most one payout per entry.
        entry_id             uuid        NOT NULL UNIQUE REFERENCES journal_entries (id),
        kind                 text        NOT NULL CHECK (kind IN ('payment', 'transfer')),
        amount               bigint      NOT NULL CHECK (amount > 0),
        destination          jsonb       NOT NULL,
        status               text        NOT NULL CHECK (status IN ('processing', 'completed', 'failed')),
        provider             text        NOT NULL,
        provider_reference   text,
        failure_reason       text,
        -- At most one reversal per payout, and an entry reverses at most one payout.
        reversal_entry_id    uuid        UNIQUE REFERENCES journal_entries (id),
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        completed_at         timestamptz,
        failed_at            timestamptz,
        CHECK ((status = 'failed') = (reversal_entry_id IS NOT NULL)),
        CHECK ((status = 'failed') = (failure_reason IS NOT NULL)),
        CHECK ((status = 'failed') = (failed_at IS NOT NULL)),
        CHECK ((status = 'completed') = (completed_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX payouts_processing ON payouts (created_at) WHERE status = 'processing'`);

    // What was posted before: deposits were credited at once, payments and external transfers left at once.
    await q.query(`
      INSERT INTO deposits (seller_id, account_id, method, status, amount, description, reason, external_reference,
                            entry_id, created_at, updated_at, completed_at)
      SELECT e.seller_id, l.account_id, 'manual', 'completed', l.amount, e.description,
             'Posted at once, before deposits were confirmed (migration 1763800100000)', e.external_reference,
             e.id, e.created_at, e.created_at, e.created_at
      FROM journal_entries e JOIN ledger_lines l ON l.entry_id = e.id AND l.type = 'deposit'
      WHERE e.kind = 'deposit'
      ORDER BY e.created_at, e.id`);
    await q.query(`
      INSERT INTO payouts (seller_id, account_id, entry_id, kind, amount, destination, status, provider,
                           created_at, updated_at, completed_at)
      SELECT e.seller_id, l.account_id, e.id, e.kind, -l.amount, coalesce(l.counterparty, '{}'::jsonb), 'completed',
             'legacy', e.created_at, e.created_at, e.created_at
      FROM journal_entries e JOIN ledger_lines l ON l.entry_id = e.id AND l.type IN ('payment', 'transfer_out')
      WHERE EXISTS (SELECT 1 FROM ledger_lines x WHERE x.entry_id = e.id AND x.type = 'external')`);

    await q.query(readFileSync(join(__dirname, '1763800100001-ledger-functions.sql'), 'utf8'));
  }

  async down(): Promise<void> {
    // The earlier ledger_post wrote its own events and knew nothing of deposits and payouts:
    // going back would leave a ledger whose money no code can explain. Restore a backup instead.
    throw new Error('LedgerDepositsPayouts1763800100000 cannot be reverted: restore a backup taken before it');
  }
}
