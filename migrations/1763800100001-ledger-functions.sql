-- The ledger's logic inside PostgreSQL (API.md section 9): the function that posts a movement
-- and the triggers that guard the books. Loaded by migration 1763800100000-ledger-deposits-payouts.ts.
-- Like every migration file this one never changes once landed: a later change of a function is
-- a new file (CREATE OR REPLACE) loaded by a new migration.
--
-- What the database guarantees, whatever the code above it does:
--   * every journal entry's lines sum to zero (checked at commit);
--   * a virtual account's balance never goes below zero nor above the limit (table checks);
--   * each account's lines form one unbroken sequence (account_line = last_line + 1, unique);
--   * journal entries and lines are never updated or deleted; accounts are never deleted and
--     only their balance moves; deposits and payouts are never deleted, their amounts and
--     parties never change and their status only moves forward;
--   * a deposit entry exists exactly for a completed deposit (one per deposit), a payment or
--     external transfer entry exactly for a payout, and a reversal entry exactly for a failed
--     payout (at most one per payout), mirroring the payout's lines.

-- Every entry balances: checked at commit, once all of its lines are written.
CREATE OR REPLACE FUNCTION ledger_entry_balances() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE total bigint;
BEGIN
  SELECT sum(amount) INTO total FROM ledger_lines WHERE entry_id = NEW.entry_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'journal entry % does not balance (lines sum to %)', NEW.entry_id, total USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only: % on % is refused', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;

CREATE OR REPLACE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER ledger_lines_append_only BEFORE UPDATE OR DELETE ON ledger_lines
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER ledger_accounts_undeletable BEFORE DELETE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER deposits_undeletable BEFORE DELETE ON deposits
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER payouts_undeletable BEFORE DELETE ON payouts
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER journal_entries_no_truncate BEFORE TRUNCATE ON journal_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER ledger_lines_no_truncate BEFORE TRUNCATE ON ledger_lines
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER ledger_accounts_no_truncate BEFORE TRUNCATE ON ledger_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER deposits_no_truncate BEFORE TRUNCATE ON deposits
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER payouts_no_truncate BEFORE TRUNCATE ON payouts
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

-- Of an account, only the cached balance and its line counter ever change, the counter one at a time.
CREATE OR REPLACE FUNCTION ledger_accounts_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.id <> OLD.id OR NEW.kind <> OLD.kind OR NEW.code IS DISTINCT FROM OLD.code
     OR NEW.seller_id IS DISTINCT FROM OLD.seller_id OR NEW.currency <> OLD.currency
     OR NEW.created_at <> OLD.created_at OR NEW.last_line <> OLD.last_line + 1 THEN
    RAISE EXCEPTION 'ledger account %: only its balance moves, one line at a time', OLD.id USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER ledger_accounts_frozen BEFORE UPDATE ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_accounts_frozen();

-- A deposit moves pending -> completed (with its entry) or pending -> expired; nothing else of it changes.
CREATE OR REPLACE FUNCTION deposits_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.seq, NEW.seller_id, NEW.account_id, NEW.method, NEW.amount, NEW.description, NEW.reason,
      NEW.external_reference, NEW.pix, NEW.boleto, NEW.expires_at, NEW.created_at)
     IS DISTINCT FROM
     (OLD.id, OLD.seq, OLD.seller_id, OLD.account_id, OLD.method, OLD.amount, OLD.description, OLD.reason,
      OLD.external_reference, OLD.pix, OLD.boleto, OLD.expires_at, OLD.created_at) THEN
    RAISE EXCEPTION 'deposit %: only its status moves', OLD.id USING ERRCODE = 'restrict_violation';
  END IF;
  IF OLD.status <> 'pending' OR NEW.status NOT IN ('completed', 'expired') THEN
    RAISE EXCEPTION 'deposit %: % -> % is not a forward move', OLD.id, OLD.status, NEW.status USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER deposits_forward_only BEFORE UPDATE ON deposits
  FOR EACH ROW EXECUTE FUNCTION deposits_forward_only();

-- A payout moves processing -> completed or processing -> failed (with its reversal); nothing else changes.
CREATE OR REPLACE FUNCTION payouts_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.seller_id, NEW.account_id, NEW.entry_id, NEW.kind, NEW.amount, NEW.destination, NEW.provider,
      NEW.created_at)
     IS DISTINCT FROM
     (OLD.id, OLD.seller_id, OLD.account_id, OLD.entry_id, OLD.kind, OLD.amount, OLD.destination, OLD.provider,
      OLD.created_at) THEN
    RAISE EXCEPTION 'payout %: only its status moves', OLD.id USING ERRCODE = 'restrict_violation';
  END IF;
  IF OLD.status <> 'processing' OR NEW.status NOT IN ('completed', 'failed') THEN
    RAISE EXCEPTION 'payout %: % -> % is not a forward move', OLD.id, OLD.status, NEW.status USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER payouts_forward_only BEFORE UPDATE ON payouts
  FOR EACH ROW EXECUTE FUNCTION payouts_forward_only();

-- At commit: each journal entry is what its kind says, and a deposit or payout says it has it.
CREATE OR REPLACE FUNCTION journal_entries_linked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind = 'deposit' THEN
    IF NOT EXISTS (
      SELECT 1 FROM deposits d JOIN ledger_lines l ON l.entry_id = d.entry_id
      WHERE d.entry_id = NEW.id AND d.status = 'completed' AND l.type = 'deposit'
        AND l.account_id = d.account_id AND l.amount = d.amount) THEN
      RAISE EXCEPTION 'journal entry %: a deposit entry posts exactly one completed deposit', NEW.id USING ERRCODE = 'check_violation';
    END IF;
  ELSIF NEW.kind = 'reversal' THEN
    IF NOT EXISTS (SELECT 1 FROM payouts p WHERE p.reversal_entry_id = NEW.id AND p.status = 'failed')
       OR EXISTS (
         (SELECT l.account_id, -l.amount FROM payouts p JOIN ledger_lines l ON l.entry_id = p.entry_id
          WHERE p.reversal_entry_id = NEW.id
          EXCEPT ALL
          SELECT l.account_id, l.amount FROM ledger_lines l WHERE l.entry_id = NEW.id)
         UNION ALL
         (SELECT l.account_id, l.amount FROM ledger_lines l WHERE l.entry_id = NEW.id
          EXCEPT ALL
          SELECT l.account_id, -l.amount FROM payouts p JOIN ledger_lines l ON l.entry_id = p.entry_id
          WHERE p.reversal_entry_id = NEW.id)) THEN
      RAISE EXCEPTION 'journal entry %: a reversal mirrors the lines of exactly one failed payout', NEW.id USING ERRCODE = 'check_violation';
    END IF;
  ELSIF (NEW.kind = 'payment' OR EXISTS (SELECT 1 FROM ledger_lines WHERE entry_id = NEW.id AND type = 'external'))
        AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.entry_id = NEW.id) THEN
    RAISE EXCEPTION 'journal entry %: money leaving the platform is a payout', NEW.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER journal_entries_linked AFTER INSERT ON journal_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION journal_entries_linked();

-- At commit: a completed deposit has its entry, a failed payout its reversal entry.
CREATE OR REPLACE FUNCTION deposits_posted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'completed' AND NOT EXISTS (SELECT 1 FROM journal_entries WHERE id = NEW.entry_id AND kind = 'deposit') THEN
    RAISE EXCEPTION 'deposit %: completed without its deposit entry', NEW.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER deposits_posted AFTER INSERT OR UPDATE ON deposits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION deposits_posted();

CREATE OR REPLACE FUNCTION payouts_posted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM journal_entries WHERE id = NEW.entry_id AND kind IN ('payment', 'transfer'))
     OR (NEW.status = 'failed'
         AND NOT EXISTS (SELECT 1 FROM journal_entries WHERE id = NEW.reversal_entry_id AND kind = 'reversal')) THEN
    RAISE EXCEPTION 'payout %: its entries are missing or of the wrong kind', NEW.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER payouts_posted AFTER INSERT OR UPDATE ON payouts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION payouts_posted();

/*
 * One movement of the ledger in one statement (one round trip), inside the caller's transaction:
 * the virtual accounts' balances move in ascending id order (so movements never deadlock; the
 * acting account only if it belongs to the seller, none below zero), then the journal entry and
 * its lines are written. p_lines: [{account_id, type, amount (signed cents), counterparty}].
 * Refusals raise LD001 insufficient funds, LD002 acting account not found, LD003 destination not
 * found (and the balance-limit check its constraint violation); nothing is written then.
 * Answers the lines written.
 */
DROP FUNCTION IF EXISTS ledger_post(text, uuid, uuid, text, text, text, jsonb);
DROP FUNCTION IF EXISTS ledger_money_text(bigint);
CREATE OR REPLACE FUNCTION ledger_post(p_kind text, p_seller uuid, p_acting uuid, p_description text,
                                       p_external_reference text, p_lines jsonb)
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
    RETURNING balance, last_line INTO v_moved;
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
      jsonb_build_object('balance', v_moved.balance, 'line', v_moved.last_line));
  END LOOP;

  INSERT INTO journal_entries (kind, seller_id, description, external_reference)
  VALUES (p_kind, p_seller, p_description, p_external_reference)
  RETURNING id INTO v_entry;

  RETURN QUERY
  INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after, counterparty)
  SELECT v_entry, (l->>'account_id')::uuid, l->>'type', (l->>'amount')::bigint,
         (v_state->((l->>'account_id')::uuid::text)->>'line')::bigint,
         (v_state->((l->>'account_id')::uuid::text)->>'balance')::bigint,
         CASE WHEN jsonb_typeof(l->'counterparty') = 'null' THEN NULL ELSE l->'counterparty' END
  FROM jsonb_array_elements(p_lines) AS l
  RETURNING *;
END $$;
