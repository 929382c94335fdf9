import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ticketed events and their public checkout (API.md section 10.1). The seat counters of a
 * ticket type are guarded by the database: `sold + held <= quantity` is a CHECK, and the
 * service only ever moves seats with conditional UPDATEs, so no interleaving of checkouts,
 * payments, declines and expiries can oversell. An order's seats move at most once, because
 * every move is tied to a conditional change of the order's status.
 */
export class TicketedEvents1763800500000 implements MigrationInterface {
  name = 'TicketedEvents1763800500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ticketed_events (
        id                uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq               bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id         uuid        NOT NULL REFERENCES sellers (id),
        name              text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description       text        NOT NULL DEFAULT '',
        venue             text        NOT NULL DEFAULT '',
        starts_at         timestamptz NOT NULL,
        ends_at           timestamptz NOT NULL,
        sales_start_at    timestamptz NOT NULL,
        sales_end_at      timestamptz NOT NULL,
        payment_types     text[]      NOT NULL
          CHECK (cardinality(payment_types) > 0 AND payment_types <@ ARRAY['credit', 'debit', 'pix', 'boleto']),
        max_installments  integer     NOT NULL CHECK (max_installments BETWEEN 1 AND 12),
        status            text        NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published', 'closed')),
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        CHECK (ends_at >= starts_at),
        CHECK (sales_end_at > sales_start_at)
      )`);
    await q.query(`CREATE INDEX ticketed_events_seller_seq ON ticketed_events (seller_id, seq)`);

    await q.query(`
      CREATE TABLE ticket_types (
        id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq            bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        event_id       uuid        NOT NULL REFERENCES ticketed_events (id),
        name           text        NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        price          bigint      NOT NULL CHECK (price > 0),
        quantity       integer     NOT NULL CHECK (quantity >= 0),
        max_per_order  integer     NOT NULL CHECK (max_per_order BETWEEN 1 AND 100),
        sold           integer     NOT NULL DEFAULT 0 CHECK (sold >= 0),
        held           integer     NOT NULL DEFAULT 0 CHECK (held >= 0),
        created_at     timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ticket_types_never_oversold CHECK (sold + held <= quantity),
        UNIQUE (event_id, name)
      )`);
    await q.query(`CREATE INDEX ticket_types_event ON ticket_types (event_id, seq)`);

    await q.query(`
      CREATE TABLE event_orders (
        id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        event_id        uuid        NOT NULL REFERENCES ticketed_events (id),
        seller_id       uuid        NOT NULL REFERENCES sellers (id),
        status          text        NOT NULL CHECK (status IN ('pending', 'paid', 'declined', 'expired', 'canceled')),
        amount          bigint      NOT NULL CHECK (amount > 0),
        payment_type    text        NOT NULL CHECK (payment_type IN ('credit', 'debit', 'pix', 'boleto')),
        installments    integer     NOT NULL CHECK (installments BETWEEN 1 AND 12),
        buyer_name      text        NOT NULL,
        buyer_email     text        NOT NULL,
        buyer_document  text        NOT NULL,
        transaction_id  uuid        UNIQUE REFERENCES transactions (id),
        pix             jsonb,
        boleto          jsonb,
        decline_reason  text,
        expires_at      timestamptz NOT NULL,
        paid_at         timestamptz,
        released_at     timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        CHECK ((status = 'paid') = (paid_at IS NOT NULL) OR status = 'canceled'),
        CHECK ((status IN ('declined', 'expired', 'canceled')) = (released_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX event_orders_event_seq ON event_orders (event_id, seq)`);
    await q.query(`CREATE INDEX event_orders_event_status_seq ON event_orders (event_id, status, seq)`);
    // The expiry job's scan: pending orders by due time.
    await q.query(`CREATE INDEX event_orders_pending_due ON event_orders (expires_at) WHERE status = 'pending'`);

    await q.query(`
      CREATE TABLE event_order_items (
        order_id        uuid    NOT NULL REFERENCES event_orders (id),
        ticket_type_id  uuid    NOT NULL REFERENCES ticket_types (id),
        quantity        integer NOT NULL CHECK (quantity > 0),
        unit_price      bigint  NOT NULL CHECK (unit_price > 0),
        PRIMARY KEY (order_id, ticket_type_id)
      )`);

    await q.query(`
      CREATE TABLE event_tickets (
        id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        order_id        uuid        NOT NULL REFERENCES event_orders (id),
        event_id        uuid        NOT NULL REFERENCES ticketed_events (id),
        ticket_type_id  uuid        NOT NULL REFERENCES ticket_types (id),
        code            text        NOT NULL UNIQUE CHECK (code ~ '^[2-9A-HJ-NP-Z]{5}(-[2-9A-HJ-NP-Z]{5}){3}$'),
        checked_in_at   timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX event_tickets_order ON event_tickets (order_id, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_tickets`);
    await q.query(`DROP TABLE event_order_items`);
    await q.query(`DROP TABLE event_orders`);
    await q.query(`DROP TABLE ticket_types`);
    await q.query(`DROP TABLE ticketed_events`);
  }
}
