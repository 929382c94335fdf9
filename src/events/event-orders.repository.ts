import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb, Cents } from '../common/money/money';
import { deferStatement } from '../database/pipelined-client';
import { keysetSql, PageRequest } from '../common/pagination/pagination';
import type { PaymentType } from '../split/table';
import type { OrderStatus } from './order-state';

export interface EventOrderRow {
  id: string;
  seq: string;
  eventId: string;
  sellerId: string;
  status: OrderStatus;
  amount: Cents;
  paymentType: PaymentType;
  installments: number;
  buyerName: string;
  buyerEmail: string;
  buyerDocument: string;
  transactionId: string | null;
  pix: { qr_code: string; expires_at: string } | null;
  boleto: { digitable_line: string; due_date: string } | null;
  declineReason: string | null;
  expiresAt: Date;
  paidAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrderItemRow {
  orderId: string;
  ticketTypeId: string;
  name: string;
  quantity: number;
  unitPrice: Cents;
}

export interface TicketRow {
  id: string;
  orderId: string;
  eventId: string;
  ticketTypeId: string;
  code: string;
  checkedInAt: Date | null;
}

export type NewOrder = Pick<
  EventOrderRow,
  | 'eventId'
  | 'sellerId'
  | 'amount'
  | 'paymentType'
  | 'installments'
  | 'buyerName'
  | 'buyerEmail'
  | 'buyerDocument'
  | 'expiresAt'
>;

export interface OrderPayment {
  transactionId: string;
  pix: EventOrderRow['pix'];
  boleto: EventOrderRow['boleto'];
}

/** An order with its items and tickets, as views need it. */
export interface FullOrder {
  order: EventOrderRow;
  items: OrderItemRow[];
  tickets: TicketRow[];
}

const ORDER_COLUMNS = `id, seq::text AS seq, event_id AS "eventId", seller_id AS "sellerId", status, amount,
  payment_type AS "paymentType", installments, buyer_name AS "buyerName", buyer_email AS "buyerEmail",
  buyer_document AS "buyerDocument", transaction_id AS "transactionId", pix, boleto,
  decline_reason AS "declineReason", expires_at AS "expiresAt", paid_at AS "paidAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;
const TICKET_COLUMNS = `id, order_id AS "orderId", event_id AS "eventId", ticket_type_id AS "ticketTypeId", code,
  checked_in_at AS "checkedInAt"`;

const CHECKED_TICKET_COLUMNS = `t.id, t.order_id AS "orderId", t.event_id AS "eventId", t.ticket_type_id AS "ticketTypeId",
  t.code, t.checked_in_at AS "checkedInAt", y.name AS "ticketTypeName"`;

export type CheckedTicket = TicketRow & { ticketTypeName: string };

/** The SQL of event orders, their items and their tickets. Reads name the event or the order's event. */
@Injectable()
export class EventOrdersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Writes the order (id made by the caller) and its items in the caller's transaction, in one
   * statement sent with the commit (deferred): its failure fails the commit.
   */
  async insert(
    manager: EntityManager,
    id: string,
    order: NewOrder,
    items: Array<{ ticketTypeId: string; name: string; quantity: number; unitPrice: Cents }>,
  ): Promise<void> {
    await deferStatement(
      manager,
      `WITH o AS (
         INSERT INTO event_orders (id, event_id, seller_id, status, amount, payment_type, installments, buyer_name,
           buyer_email, buyer_document, expires_at)
         VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10) RETURNING id)
       INSERT INTO event_order_items (order_id, ticket_type_id, name, quantity, unit_price)
       SELECT o.id, v.* FROM o, unnest($11::uuid[], $12::text[], $13::int[], $14::bigint[]) AS v`,
      [
        id,
        order.eventId,
        order.sellerId,
        order.amount,
        order.paymentType,
        order.installments,
        order.buyerName,
        order.buyerEmail,
        order.buyerDocument,
        order.expiresAt,
        items.map((i) => i.ticketTypeId),
        items.map((i) => i.name),
        items.map((i) => i.quantity),
        items.map((i) => i.unitPrice),
      ],
    );
  }

  /** The order of this event with its items and tickets. */
  async findForEvent(eventId: string, id: string): Promise<FullOrder | null> {
    const [row]: EventOrderRow[] = await this.dataSource.query(
      `SELECT ${ORDER_COLUMNS} FROM event_orders WHERE event_id = $1 AND id = $2`,
      [eventId, id],
    );
    if (!row) return null;
    const [full] = await this.withDetails([toOrder(row)]);
    return full;
  }

  /** Locks the order row of this seller for the rest of the caller's transaction. */
  async lockForSeller(manager: EntityManager, sellerId: string, id: string): Promise<EventOrderRow | null> {
    const [row]: EventOrderRow[] = await manager.query(
      `SELECT ${ORDER_COLUMNS} FROM event_orders WHERE seller_id = $1 AND id = $2 FOR UPDATE`,
      [sellerId, id],
    );
    return row ? toOrder(row) : null;
  }

  /** A page of the event's orders, newest first unless asked otherwise; one index range scan. */
  async listForEvent(eventId: string, status: OrderStatus | undefined, page: PageRequest): Promise<FullOrder[]> {
    const params: unknown[] = [eventId];
    const conditions = ['event_id = $1'];
    if (status) conditions.push(`status = $${params.push(status)}`);
    const keyset = keysetSql('event_orders.seq', page, params);
    if (keyset.condition) conditions.push(keyset.condition);
    const rows: EventOrderRow[] = await this.dataSource.query(
      `SELECT ${ORDER_COLUMNS} FROM event_orders WHERE ${conditions.join(' AND ')} ${keyset.orderAndLimit}`,
      params,
    );
    return this.withDetails(rows.map(toOrder));
  }

  /** The items of an order in ticket type id order (the order seat rows are locked in). */
  async items(manager: EntityManager, orderId: string): Promise<OrderItemRow[]> {
    const rows: OrderItemRow[] = await manager.query(
      `SELECT i.order_id AS "orderId", i.ticket_type_id AS "ticketTypeId", i.name, i.quantity, i.unit_price AS "unitPrice"
       FROM event_order_items i WHERE i.order_id = $1 ORDER BY i.ticket_type_id`,
      [orderId],
    );
    return rows.map(toItem);
  }

  /**
   * Settles the order of this seller that this transaction pays (or that no transaction pays
   * yet), in one statement under the row lock: records the transaction and its payment data
   * (pix code, boleto line) the first time and, when the order is pending, moves it to
   * `pendingTo` (the status a pending order takes with the transaction as it now is). Answers
   * the order as it is now and the status it had; null when there is no such order, or another
   * transaction pays it.
   */
  async settle(
    manager: EntityManager,
    sellerId: string,
    id: string,
    payment: OrderPayment,
    pendingTo: OrderStatus,
    reason: string | null,
  ): Promise<{ order: EventOrderRow; previous: OrderStatus } | null> {
    const [rows]: [Array<EventOrderRow & { previous: OrderStatus }>, number] = await manager.query(
      `UPDATE event_orders o SET transaction_id = $3,
         pix = CASE WHEN o.transaction_id IS NULL THEN $4::jsonb ELSE o.pix END,
         boleto = CASE WHEN o.transaction_id IS NULL THEN $5::jsonb ELSE o.boleto END,
         status = CASE WHEN locked.moving THEN $6 ELSE o.status END,
         decline_reason = CASE WHEN locked.moving THEN COALESCE($7, o.decline_reason) ELSE o.decline_reason END,
         paid_at = CASE WHEN locked.moving AND $6 = 'paid' THEN now() ELSE o.paid_at END,
         released_at = CASE WHEN locked.moving AND $6 IN ('declined', 'expired', 'canceled') THEN now()
           ELSE o.released_at END,
         updated_at = CASE WHEN o.transaction_id IS NULL OR (locked.moving AND $6 <> 'pending') THEN now()
           ELSE o.updated_at END
       FROM (SELECT id AS locked_id, status AS previous, status = 'pending' AS moving FROM event_orders
             WHERE seller_id = $1 AND id = $2 AND (transaction_id IS NULL OR transaction_id = $3) FOR UPDATE) locked
       WHERE o.id = locked.locked_id
       RETURNING ${ORDER_COLUMNS}, locked.previous`,
      [
        sellerId,
        id,
        payment.transactionId,
        JSON.stringify(payment.pix),
        JSON.stringify(payment.boleto),
        pendingTo,
        reason,
      ],
    );
    if (!rows[0]) return null;
    const { previous, ...order } = rows[0];
    return { order: toOrder(order), previous };
  }

  /**
   * Moves the order from `from` to `to`; null when it is no longer in `from`. Every move of
   * seats goes with one of these, so an order's seats move at most once per change.
   */
  async transition(
    manager: EntityManager,
    id: string,
    from: OrderStatus,
    to: OrderStatus,
    declineReason: string | null = null,
  ): Promise<EventOrderRow | null> {
    const [rows]: [EventOrderRow[], number] = await manager.query(
      `UPDATE event_orders SET status = $3, updated_at = now(),
         decline_reason = COALESCE($4, decline_reason),
         paid_at = CASE WHEN $3 = 'paid' THEN now() ELSE paid_at END,
         released_at = CASE WHEN $3 IN ('declined', 'expired', 'canceled') THEN now() ELSE released_at END
       WHERE id = $1 AND status = $2 RETURNING ${ORDER_COLUMNS}`,
      [id, from, to, declineReason],
    );
    return rows[0] ? toOrder(rows[0]) : null;
  }

  /** Pending orders due at `now`, oldest first (the expiry job's work list). */
  async duePending(now: Date, limit: number, after: { expiresAt: Date; id: string } | null): Promise<EventOrderRow[]> {
    const rows: EventOrderRow[] = await this.dataSource.query(
      `SELECT ${ORDER_COLUMNS} FROM event_orders WHERE status = 'pending' AND expires_at <= $1
         AND ($3::timestamptz IS NULL OR (expires_at, id) > ($3::timestamptz, $4::uuid))
       ORDER BY expires_at, id LIMIT $2`,
      [now, limit, after?.expiresAt ?? null, after?.id ?? null],
    );
    return rows.map(toOrder);
  }

  /** Writes the tickets in the caller's transaction (deferred: sent with the commit) and answers them as written. */
  async insertTickets(
    manager: EntityManager,
    tickets: Array<{ orderId: string; eventId: string; ticketTypeId: string; code: string }>,
  ): Promise<TicketRow[]> {
    const rows: TicketRow[] = tickets.map((t) => ({ id: randomUUID(), ...t, checkedInAt: null }));
    await deferStatement(
      manager,
      `INSERT INTO event_tickets (id, order_id, event_id, ticket_type_id, code)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[])`,
      [
        rows.map((t) => t.id),
        rows.map((t) => t.orderId),
        rows.map((t) => t.eventId),
        rows.map((t) => t.ticketTypeId),
        rows.map((t) => t.code),
      ],
    );
    return rows;
  }

  /**
   * Checks a ticket of a paid order of this event in, once: the conditional UPDATE lets one
   * of concurrent check-ins through. `already` when it was checked in before; null when
   * there is no such ticket (or its order is not paid).
   */
  async checkIn(eventId: string, code: string): Promise<{ ticket: CheckedTicket; already: boolean } | null> {
    const [rows]: [CheckedTicket[], number] = await this.dataSource.query(
      `UPDATE event_tickets t SET checked_in_at = now()
       FROM event_orders o, ticket_types y
       WHERE t.event_id = $1 AND t.code = $2 AND t.checked_in_at IS NULL
         AND o.id = t.order_id AND o.status = 'paid' AND y.id = t.ticket_type_id
       RETURNING ${CHECKED_TICKET_COLUMNS}`,
      [eventId, code],
    );
    if (rows.length > 0) return { ticket: rows[0], already: false };
    const [found]: CheckedTicket[] = await this.dataSource.query(
      `SELECT ${CHECKED_TICKET_COLUMNS} FROM event_tickets t
       JOIN event_orders o ON o.id = t.order_id JOIN ticket_types y ON y.id = t.ticket_type_id
       WHERE t.event_id = $1 AND t.code = $2 AND o.status = 'paid'`,
      [eventId, code],
    );
    return found ? { ticket: found, already: true } : null;
  }

  private async withDetails(orders: EventOrderRow[]): Promise<FullOrder[]> {
    if (orders.length === 0) return [];
    const ids = orders.map((o) => o.id);
    const [items, tickets]: [OrderItemRow[], TicketRow[]] = await Promise.all([
      this.dataSource.query(
        `SELECT i.order_id AS "orderId", i.ticket_type_id AS "ticketTypeId", i.name, i.quantity,
           i.unit_price AS "unitPrice"
         FROM event_order_items i JOIN ticket_types t ON t.id = i.ticket_type_id
         WHERE i.order_id = ANY($1::uuid[]) ORDER BY t.seq`,
        [ids],
      ),
      this.dataSource.query(
        `SELECT ${TICKET_COLUMNS} FROM event_tickets WHERE order_id = ANY($1::uuid[]) ORDER BY seq`,
        [ids],
      ),
    ]);
    return orders.map((order) => ({
      order,
      items: items.filter((i) => i.orderId === order.id).map(toItem),
      tickets: tickets.filter((t) => t.orderId === order.id),
    }));
  }
}

function toOrder(row: EventOrderRow): EventOrderRow {
  return { ...row, amount: centsFromDb(row.amount) };
}

function toItem(row: OrderItemRow): OrderItemRow {
  return { ...row, unitPrice: centsFromDb(row.unitPrice) };
}
