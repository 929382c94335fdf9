import { MigrationInterface, QueryRunner } from 'typeorm';

export class Transactions1763700300000 implements MigrationInterface {
  name = 'Transactions1763700300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE transactions (
        id                   uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq                  bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id            uuid        NOT NULL REFERENCES sellers (id),
        amount               bigint      NOT NULL CHECK (amount > 0),
        currency             text        NOT NULL DEFAULT 'BRL',
        payment_type         text        NOT NULL CHECK (payment_type IN ('credit', 'debit', 'pix', 'boleto')),
        installments         integer     NOT NULL CHECK (installments BETWEEN 1 AND 21),
        card_brand           text,
        card_last4           text        CHECK (card_last4 ~ '^[0-9]{4}$'),
        entry_mode           text        NOT NULL CHECK (entry_mode IN ('card_present', 'online')),
        status               text        NOT NULL CHECK (status IN ('pending', 'approved', 'declined', 'voided')),
        description          text,
        source               text        NOT NULL,
        reference            text,
        customer             jsonb,
        rate_plan_id         uuid        NOT NULL REFERENCES rate_plans (id),
        split_plan_id        uuid        REFERENCES split_plans (id),
        fee_percentage       integer     NOT NULL,
        fee_fixed            bigint      NOT NULL,
        fee_amount           bigint      NOT NULL,
        shares               jsonb       NOT NULL DEFAULT '[]'::jsonb,
        developer_amount     bigint      NOT NULL,
        participants_amount  bigint      NOT NULL,
        seller_net           bigint      NOT NULL CHECK (seller_net >= 0),
        processor            text        NOT NULL,
        processor_reference  text,
        decline_reason       text,
        pix                  jsonb,
        boleto               jsonb,
        created_at           timestamptz NOT NULL DEFAULT now(),
        updated_at           timestamptz NOT NULL DEFAULT now(),
        approved_at          timestamptz,
        voided_at            timestamptz,
        void_reason          text,
        CHECK (fee_amount + developer_amount + participants_amount + seller_net = amount)
      )`);
    // A page of a seller's transactions is one backwards range scan, whatever the table's size.
    await q.query(`CREATE INDEX transactions_seller_seq ON transactions (seller_id, seq)`);
    // Each equality filter of the list has its index, so a filtered page is one range scan too.
    for (const column of ['status', 'payment_type', 'card_brand', 'entry_mode', 'source']) {
      await q.query(`CREATE INDEX transactions_seller_${column}_seq ON transactions (seller_id, ${column}, seq)`);
    }
    await q.query(
      `CREATE INDEX transactions_seller_reference ON transactions (seller_id, reference) WHERE reference IS NOT NULL`,
    );

    await q.query(`
      CREATE TABLE transaction_split_rules (
        id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        transaction_id  uuid        NOT NULL REFERENCES transactions (id),
        recipient       uuid        NOT NULL,
        amount_type     text        NOT NULL CHECK (amount_type IN ('fixed', 'percentage')),
        fixed_amount    bigint      CHECK (fixed_amount > 0),
        percentage      integer     CHECK (percentage > 0 AND percentage <= 1000000),
        amount_cents    bigint      NOT NULL CHECK (amount_cents >= 0),
        created_at      timestamptz NOT NULL DEFAULT now(),
        deleted_at      timestamptz,
        CHECK ((amount_type = 'fixed') = (fixed_amount IS NOT NULL)),
        CHECK ((amount_type = 'percentage') = (percentage IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX transaction_split_rules_transaction ON transaction_split_rules (transaction_id, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE transaction_split_rules`);
    await q.query(`DROP TABLE transactions`);
  }
}
