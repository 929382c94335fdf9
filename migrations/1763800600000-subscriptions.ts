import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Subscriptions (API.md section 10.2): plans, subscriptions and one row per charge attempt,
 * plus the sandbox processor's card tokens.
 *
 * The database guards what the code promises: a plan's price and interval never change; a
 * charge attempt of a (subscription, period) is claimed once (UNIQUE), and a period has at
 * most one charge that is in flight, awaiting payment or paid (partial UNIQUE), so a crashed
 * or duplicated renewal worker cannot charge a period twice.
 */
export class Subscriptions1763800600000 implements MigrationInterface {
  name = 'Subscriptions1763800600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE subscription_plans (
        id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id       uuid        NOT NULL REFERENCES sellers (id),
        name            text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description     text,
        amount          bigint      NOT NULL CHECK (amount > 0 AND amount <= 1000000000),
        interval        text        NOT NULL CHECK (interval IN ('day', 'week', 'month', 'year')),
        interval_count  integer     NOT NULL CHECK (interval_count BETWEEN 1 AND 12),
        trial_days      integer     NOT NULL CHECK (trial_days BETWEEN 0 AND 365),
        payment_types   text[]      NOT NULL CHECK (cardinality(payment_types) >= 1
                                                    AND payment_types <@ ARRAY['credit', 'pix']::text[]),
        active          boolean     NOT NULL DEFAULT true,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX subscription_plans_seller_seq ON subscription_plans (seller_id, seq)`);
    await q.query(`
      CREATE FUNCTION subscription_plan_terms_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.seller_id IS DISTINCT FROM OLD.seller_id OR NEW.amount IS DISTINCT FROM OLD.amount
           OR NEW.interval IS DISTINCT FROM OLD.interval OR NEW.interval_count IS DISTINCT FROM OLD.interval_count
           OR NEW.trial_days IS DISTINCT FROM OLD.trial_days OR NEW.payment_types IS DISTINCT FROM OLD.payment_types THEN
          RAISE EXCEPTION 'a subscription plan''s seller, price, interval, trial and payment types never change'
            USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER subscription_plan_terms_frozen BEFORE UPDATE ON subscription_plans
                   FOR EACH ROW EXECUTE FUNCTION subscription_plan_terms_frozen()`);

    await q.query(`
      CREATE TABLE subscriptions (
        id                    uuid        PRIMARY KEY,
        seq                   bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        plan_id               uuid        NOT NULL REFERENCES subscription_plans (id),
        seller_id             uuid        NOT NULL REFERENCES sellers (id),
        status                text        NOT NULL
                              CHECK (status IN ('trialing', 'active', 'incomplete', 'past_due', 'canceled')),
        name                  text        NOT NULL,
        email                 text        NOT NULL,
        document              text        NOT NULL,
        payment_type          text        NOT NULL CHECK (payment_type IN ('credit', 'pix')),
        card_token            text,
        card_brand            text,
        card_last4            text        CHECK (card_last4 ~ '^[0-9]{4}$'),
        card_exp_month        integer     CHECK (card_exp_month BETWEEN 1 AND 12),
        card_exp_year         integer,
        manage_token_hash     text        NOT NULL UNIQUE,
        anchor_at             timestamptz NOT NULL,
        trial_end             timestamptz,
        next_period           integer     NOT NULL CHECK (next_period >= 0),
        failed_attempts       integer     NOT NULL DEFAULT 0 CHECK (failed_attempts BETWEEN 0 AND 4),
        current_period_start  timestamptz NOT NULL,
        current_period_end    timestamptz NOT NULL CHECK (current_period_end > current_period_start),
        next_charge_at        timestamptz,
        cancel_at_period_end  boolean     NOT NULL DEFAULT false,
        canceled_at           timestamptz,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now(),
        CHECK ((payment_type = 'credit') = (card_token IS NOT NULL)),
        CHECK ((status = 'canceled') = (canceled_at IS NOT NULL)),
        CHECK ((status = 'canceled') = (next_charge_at IS NULL))
      )`);
    await q.query(`CREATE INDEX subscriptions_plan_seq ON subscriptions (plan_id, seq)`);
    // The renewal job's scan: the live subscriptions whose next charge (or check) is due.
    await q.query(`CREATE INDEX subscriptions_due ON subscriptions (next_charge_at) WHERE status <> 'canceled'`);

    await q.query(`
      CREATE TABLE subscription_charges (
        id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq              bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        subscription_id  uuid        NOT NULL REFERENCES subscriptions (id),
        period           integer     NOT NULL CHECK (period >= 0),
        attempt          integer     NOT NULL CHECK (attempt BETWEEN 0 AND 3),
        status           text        NOT NULL
                         CHECK (status IN ('processing', 'pending', 'approved', 'declined', 'voided', 'interrupted')),
        amount           bigint      NOT NULL CHECK (amount > 0),
        period_start     timestamptz NOT NULL,
        period_end       timestamptz NOT NULL,
        due_at           timestamptz NOT NULL,
        as_of            timestamptz NOT NULL,
        lease            bigint,
        transaction_id   uuid        UNIQUE REFERENCES transactions (id),
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        CHECK (status IN ('processing', 'interrupted') OR transaction_id IS NOT NULL)
      )`);
    // The claim: one attempt of a period is charged once (an interrupted claim, whose charge never
    // happened or was voided, frees its attempt for a new claim).
    await q.query(`CREATE UNIQUE INDEX subscription_charges_claim ON subscription_charges (subscription_id, period, attempt)
                   WHERE status <> 'interrupted'`);
    // The money key: at most one charge of a period is in flight, awaiting payment or paid.
    await q.query(`CREATE UNIQUE INDEX subscription_charges_one_live ON subscription_charges (subscription_id, period)
                   WHERE status IN ('processing', 'pending', 'approved')`);
    await q.query(`CREATE INDEX subscription_charges_subscription ON subscription_charges (subscription_id, seq)`);
    await q.query(
      `CREATE INDEX subscription_charges_processing ON subscription_charges (lease) WHERE status = 'processing'`,
    );

    // The sandbox processor's vault: per card token only what it needs to play the processor.
    await q.query(`
      CREATE TABLE sandbox_card_tokens (
        token       text        PRIMARY KEY,
        outcome     text,
        brand       text        NOT NULL,
        last4       text        NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
        exp_month   integer     NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
        exp_year    integer     NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sandbox_card_tokens`);
    await q.query(`DROP TABLE subscription_charges`);
    await q.query(`DROP TABLE subscriptions`);
    await q.query(`DROP TABLE subscription_plans`);
    await q.query(`DROP FUNCTION subscription_plan_terms_frozen()`);
  }
}
