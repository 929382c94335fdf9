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
        -- 1 trillion BRL: far above any real balance, far below where cents stop being exact in JavaScript.
        CONSTRAINT ledger_accounts_balance_limit CHECK (kind = 'system' OR balance <= 100000000000000),
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
      await q.query(
        `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ledger_append_only()`,
      );
    }
    await q.query(
      `CREATE TRIGGER ledger_accounts_undeletable BEFORE DELETE ON ledger_accounts FOR EACH ROW EXECUTE FUNCTION ledger_append_only()`,
    );
    for (const table of ['journal_entries', 'ledger_lines', 'ledger_accounts']) {
      await q.query(
        `CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only()`,
      );
    }
    // Of an account, only the cached balance and its line counter ever change, the counter one at a time.
    await q.query(`
      CREATE FUNCTION ledger_accounts_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id <> OLD.id OR NEW.kind <> OLD.kind OR NEW.code IS DISTINCT FROM OLD.code
           OR NEW.seller_id IS DISTINCT FROM OLD.seller_id OR NEW.currency <> OLD.currency
           OR NEW.created_at <> OLD.created_at OR NEW.last_line <> OLD.last_line + 1 THEN
          RAISE EXCEPTION 'ledger account %: only its balance moves, one line at a time', OLD.id USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(
      `CREATE TRIGGER ledger_accounts_frozen BEFORE UPDATE ON ledger_accounts FOR EACH ROW EXECUTE FUNCTION ledger_accounts_frozen()`,
    );

    // The SQL twin of formatMoney() (src/common/money/money.ts), for event payloads written by ledger_post.
    await q.query(`
      CREATE FUNCTION ledger_money_text(cents bigint) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
        SELECT CASE WHEN cents < 0 THEN '-' ELSE '' END || (abs(cents) / 100)::text || '.' || lpad((abs(cents) % 100)::text, 2, '0')
      $$`);

    /*
     * One movement of the ledger as one statement (one round trip, one implicit transaction):
     * the virtual accounts' balances move in ascending id order (the acting account only if it
     * belongs to the seller, none below zero), then the journal entry, its lines and the outbox
     * events are written. Refusals raise LD001 insufficient funds, LD002 acting account not
     * found, LD003 destination not found; nothing is written then. Answers the lines.
     */
    await q.query(`
      CREATE FUNCTION ledger_post(p_kind text, p_seller uuid, p_acting uuid, p_description text,
                                  p_external_reference text, p_event text, p_lines jsonb)
      RETURNS SETOF ledger_lines LANGUAGE plpgsql AS $$
      DECLARE
        v_line jsonb;
        v_account uuid;
        v_moved record;
        v_state jsonb := '{}'::jsonb;
        v_entry uuid;
      BEGIN
        FOR v_line IN
          SELECT value FROM jsonb_array_elements(p_lines)
          WHERE value->>'type' <> 'external' ORDER BY (value->>'account_id')::uuid
        LOOP
          v_account := (v_line->>'account_id')::uuid;
          UPDATE ledger_accounts
             SET balance = balance + (v_line->>'amount')::bigint, last_line = last_line + 1, updated_at = now()
           WHERE id = v_account AND kind = 'virtual' AND balance + (v_line->>'amount')::bigint >= 0
             AND (v_account <> p_acting OR seller_id = p_seller)
          RETURNING balance, last_line, seller_id INTO v_moved;
          IF NOT FOUND THEN
            IF v_account <> p_acting THEN
              RAISE EXCEPTION 'destination virtual account % does not exist', v_account USING ERRCODE = 'LD003';
            ELSIF NOT EXISTS (SELECT 1 FROM ledger_accounts WHERE id = p_acting AND kind = 'virtual' AND seller_id = p_seller) THEN
              RAISE EXCEPTION 'virtual account % not found', p_acting USING ERRCODE = 'LD002';
            ELSE
              RAISE EXCEPTION 'insufficient funds in %', p_acting USING ERRCODE = 'LD001';
            END IF;
          END IF;
          v_state := v_state || jsonb_build_object(v_account::text,
            jsonb_build_object('balance', v_moved.balance, 'line', v_moved.last_line, 'seller', v_moved.seller_id));
        END LOOP;

        INSERT INTO journal_entries (kind, seller_id, description, external_reference)
        VALUES (p_kind, p_seller, p_description, p_external_reference)
        RETURNING id INTO v_entry;

        RETURN QUERY
        WITH lines AS (
          INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after, counterparty)
          SELECT v_entry, (l->>'account_id')::uuid, l->>'type', (l->>'amount')::bigint,
                 (v_state->((l->>'account_id')::uuid::text)->>'line')::bigint,
                 (v_state->((l->>'account_id')::uuid::text)->>'balance')::bigint,
                 CASE WHEN jsonb_typeof(l->'counterparty') = 'null' THEN NULL ELSE l->'counterparty' END
          FROM jsonb_array_elements(p_lines) AS l
          RETURNING *
        ), events AS (
          INSERT INTO outbox_events (type, seller_id, data)
          SELECT p_event, (v_state->(lines.account_id::text)->>'seller')::uuid,
                 jsonb_build_object(
                   'virtual_account', lines.account_id,
                   'journal_entry', v_entry,
                   'posting', jsonb_build_object(
                     'id', lines.id, 'virtual_account', lines.account_id, 'type', lines.type,
                     'amount', ledger_money_text(abs(lines.amount)), 'balance_after', ledger_money_text(lines.balance_after),
                     'description', p_description, 'counterparty', lines.counterparty, 'journal_entry', v_entry,
                     'created_at', to_char(lines.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
          FROM lines WHERE lines.type <> 'external'
        )
        SELECT * FROM lines;
      END $$`);

    // Every existing sub-account gets its virtual account, with the same id.
    await q.query(`
      INSERT INTO ledger_accounts (id, kind, seller_id, name)
      SELECT s.id, 'virtual', s.seller_id, s.name FROM subaccounts s
      WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = s.id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION ledger_post(text, uuid, uuid, text, text, text, jsonb)`);
    await q.query(`DROP FUNCTION ledger_money_text(bigint)`);
    await q.query(`DROP TABLE ledger_lines`);
    await q.query(`DROP TABLE journal_entries`);
    await q.query(`DROP TABLE ledger_accounts`);
    await q.query(`DROP FUNCTION ledger_entry_balances()`);
    await q.query(`DROP FUNCTION ledger_append_only()`);
    await q.query(`DROP FUNCTION ledger_accounts_frozen()`);
  }
}
