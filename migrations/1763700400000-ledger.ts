import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The double-entry ledger of virtual accounts. The database guards the invariants too:
 * a virtual account's balance never goes below zero, every journal entry's lines sum to
 * zero (checked at commit), each account's lines form one unbroken sequence, and nothing
 * written is ever updated or deleted (but the cached balance).
 */
export class Ledger1763700400000 implements MigrationInterface {
  name = 'Ledger1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ledger_accounts (
        id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq         bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        kind        text        NOT NULL CHECK (kind IN ('virtual', 'system')),
        code        text        UNIQUE,
        seller_id   uuid        REFERENCES sellers (id),
        name        text        NOT NULL,
        currency    text        NOT NULL DEFAULT 'BRL',
        balance     bigint      NOT NULL DEFAULT 0,
        last_line   bigint      NOT NULL DEFAULT 0,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ledger_accounts_no_overdraft CHECK (kind = 'system' OR balance >= 0),
        CHECK ((kind = 'virtual') = (seller_id IS NOT NULL)),
        CHECK ((kind = 'system') = (code IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX ledger_accounts_seller_seq ON ledger_accounts (seller_id, seq) WHERE kind = 'virtual'`);
    // The outside world: money comes in as deposits and leaves as payments and external transfers.
    await q.query(`
      INSERT INTO ledger_accounts (kind, code, name) VALUES
        ('system', 'external:deposits', 'Deposits from outside the platform'),
        ('system', 'external:payments', 'Payments to outside the platform'),
        ('system', 'external:transfers', 'Transfers to outside the platform (PIX, bank accounts)')`);

    await q.query(`
      CREATE TABLE journal_entries (
        id                  uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        kind                text        NOT NULL CHECK (kind IN ('deposit', 'payment', 'transfer')),
        seller_id           uuid        NOT NULL REFERENCES sellers (id),
        description         text,
        external_reference  text,
        created_at          timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE ledger_lines (
        id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        entry_id       uuid        NOT NULL REFERENCES journal_entries (id),
        account_id     uuid        NOT NULL REFERENCES ledger_accounts (id),
        type           text        NOT NULL CHECK (type IN ('deposit', 'payment', 'transfer_out', 'transfer_in', 'external')),
        amount         bigint      NOT NULL CHECK (amount <> 0),
        account_line   bigint,
        balance_after  bigint,
        counterparty   jsonb,
        created_at     timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, account_line),
        CHECK (type = 'external' OR (account_line IS NOT NULL AND balance_after IS NOT NULL AND balance_after >= 0))
      )`);
    // A virtual account's statement reads its lines by (account_id, account_line), the unique index above.
    await q.query(`CREATE INDEX ledger_lines_entry ON ledger_lines (entry_id)`);

    await q.query(`
      CREATE FUNCTION ledger_entry_balances() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE total bigint;
      BEGIN
        SELECT sum(amount) INTO total FROM ledger_lines WHERE entry_id = NEW.entry_id;
        IF total <> 0 THEN
          RAISE EXCEPTION 'journal entry % does not balance (lines sum to %)', NEW.entry_id, total USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE CONSTRAINT TRIGGER ledger_entry_balances AFTER INSERT ON ledger_lines
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_entry_balances()`);

    await q.query(`
      CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the ledger is append-only: % on % is refused', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
      END $$`);
    for (const table of ['journal_entries', 'ledger_lines']) {
      await q.query(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ledger_append_only()`);
    }
    await q.query(`CREATE TRIGGER ledger_accounts_undeletable BEFORE DELETE ON ledger_accounts FOR EACH ROW EXECUTE FUNCTION ledger_append_only()`);

    // Every existing sub-account gets its virtual account, with the same id.
    await q.query(`
      INSERT INTO ledger_accounts (id, kind, seller_id, name)
      SELECT s.id, 'virtual', s.seller_id, s.name FROM subaccounts s
      WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = s.id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE ledger_lines`);
    await q.query(`DROP TABLE journal_entries`);
    await q.query(`DROP TABLE ledger_accounts`);
    await q.query(`DROP FUNCTION ledger_entry_balances()`);
    await q.query(`DROP FUNCTION ledger_append_only()`);
  }
}
