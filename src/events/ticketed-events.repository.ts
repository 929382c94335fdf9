import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { isCheckViolation } from '../common/errors/database-errors';
import { deferStatement } from '../database/pipelined-client';
import { SharedConnections } from '../database/shared-connections';
import { centsFromDb, Cents } from '../common/money/money';
import { keysetSql, PageRequest } from '../common/pagination/pagination';
import { setWithUpdatedAt } from '../database/updated-at';
import type { PaymentType } from '../split/table';
import type { EventStatus } from './dto/ticketed-event.dto';

export interface TicketedEventRow {
  id: string;
  seq: string;
  sellerId: string;
  name: string;
  description: string;
  venue: string;
  startsAt: Date;
  endsAt: Date;
  salesStartAt: Date;
  salesEndAt: Date;
  paymentTypes: PaymentType[];
  maxInstallments: number;
  status: EventStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface TicketTypeRow {
  id: string;
  eventId: string;
  name: string;
  price: Cents;
  quantity: number;
  maxPerOrder: number;
  sold: number;
  held: number;
}

export type NewTicketedEvent = Omit<TicketedEventRow, 'id' | 'seq' | 'status' | 'createdAt' | 'updatedAt'>;
export type EventChanges = Partial<
  Pick<
    TicketedEventRow,
    | 'name'
    | 'description'
    | 'venue'
    | 'startsAt'
    | 'endsAt'
    | 'salesStartAt'
    | 'salesEndAt'
    | 'paymentTypes'
    | 'maxInstallments'
    | 'status'
  >
>;
export type NewTicketType = Pick<TicketTypeRow, 'name' | 'price' | 'quantity' | 'maxPerOrder'>;

const EVENT_COLUMNS = `id, seq::text AS seq, seller_id AS "sellerId", name, description, venue, starts_at AS "startsAt",
  ends_at AS "endsAt", sales_start_at AS "salesStartAt", sales_end_at AS "salesEndAt",
  payment_types AS "paymentTypes", max_installments AS "maxInstallments", status,
  created_at AS "createdAt", updated_at AS "updatedAt"`;
const TYPE_COLUMNS = `id, event_id AS "eventId", name, price, quantity, max_per_order AS "maxPerOrder", sold, held`;
const EVENT_FIELDS: Record<keyof EventChanges, string> = {
  name: 'name',
  description: 'description',
  venue: 'venue',
  startsAt: 'starts_at',
  endsAt: 'ends_at',
  salesStartAt: 'sales_start_at',
  salesEndAt: 'sales_end_at',
  paymentTypes: 'payment_types',
  maxInstallments: 'max_installments',
  status: 'status',
};

/**
 * The SQL of ticketed events and their ticket types, including the seat counters. The CHECK
 * `sold + held <= quantity` guards every move of seats: a hold past the quantity fails.
 */
@Injectable()
export class TicketedEventsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sharedConnections: SharedConnections,
  ) {}

  async insert(manager: EntityManager, event: NewTicketedEvent): Promise<TicketedEventRow> {
    const [row]: TicketedEventRow[] = await manager.query(
      `INSERT INTO ticketed_events (seller_id, name, description, venue, starts_at, ends_at, sales_start_at,
         sales_end_at, payment_types, max_installments)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${EVENT_COLUMNS}`,
      [
        event.sellerId,
        event.name,
        event.description,
        event.venue,
        event.startsAt,
        event.endsAt,
        event.salesStartAt,
        event.salesEndAt,
        event.paymentTypes,
        event.maxInstallments,
      ],
    );
    return row;
  }

  async insertTicketTypes(manager: EntityManager, eventId: string, types: NewTicketType[]): Promise<void> {
    if (types.length === 0) return;
    await manager.query(
      `INSERT INTO ticket_types (event_id, name, price, quantity, max_per_order)
       SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::int[], $5::int[])`,
      [
        eventId,
        types.map((t) => t.name),
        types.map((t) => t.price),
        types.map((t) => t.quantity),
        types.map((t) => t.maxPerOrder),
      ],
    );
  }

  async find(id: string, manager: EntityManager = this.dataSource.manager): Promise<TicketedEventRow | null> {
    const [row]: TicketedEventRow[] = await manager.query(
      `SELECT ${EVENT_COLUMNS} FROM ticketed_events WHERE id = $1`,
      [id],
    );
    return row ?? null;
  }

  /** The event with its ticket types (oldest first), in one query, by key (a hot read: every checkout and public page). */
  async findWithTicketTypes(id: string): Promise<{ event: TicketedEventRow; types: TicketTypeRow[] } | null> {
    const [row] = await this.sharedConnections.query<
      TicketedEventRow & { ticketTypes: Array<TicketTypeRow & { seq: string }> }
    >(
      `SELECT ${EVENT_COLUMNS},
           (SELECT coalesce(json_agg(t ORDER BY t.seq), '[]'::json)
            FROM (SELECT ${TYPE_COLUMNS}, seq FROM ticket_types WHERE event_id = $1) t) AS "ticketTypes"
         FROM ticketed_events WHERE id = $1`,
      [id],
    );
    if (!row) return null;
    const { ticketTypes, ...event } = row;
    return { event, types: ticketTypes.map(({ seq: _seq, ...type }) => toTicketType(type)) };
  }

  /** Locks the event row (changes of an event are serialised). */
  async lock(manager: EntityManager, id: string): Promise<TicketedEventRow | null> {
    const [row]: TicketedEventRow[] = await manager.query(
      `SELECT ${EVENT_COLUMNS} FROM ticketed_events WHERE id = $1 FOR UPDATE`,
      [id],
    );
    return row ?? null;
  }

  /** A page of events, one seller's (or everyone's for a superuser), newest first unless asked otherwise. */
  async list(sellerId: string | null, status: EventStatus | undefined, page: PageRequest): Promise<TicketedEventRow[]> {
    const params: unknown[] = [];
    const conditions: string[] = [];
    if (sellerId) conditions.push(`seller_id = $${params.push(sellerId)}`);
    if (status) conditions.push(`status = $${params.push(status)}`);
    const keyset = keysetSql('ticketed_events.seq', page, params);
    if (keyset.condition) conditions.push(keyset.condition);
    return this.dataSource.query(
      `SELECT ${EVENT_COLUMNS} FROM ticketed_events
       ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''} ${keyset.orderAndLimit}`,
      params,
    );
  }

  /** Writes the event's changes; `updated_at` moves when one of them is new or `ticketTypesChanged`. */
  async update(manager: EntityManager, id: string, changes: EventChanges, ticketTypesChanged: boolean): Promise<void> {
    const params: unknown[] = [id];
    const sets = (Object.keys(changes) as Array<keyof EventChanges>)
      .filter((key) => changes[key] !== undefined)
      .map((key): [string, string] => [EVENT_FIELDS[key], `$${params.push(changes[key])}`]);
    await manager.query(
      `UPDATE ticketed_events SET ${setWithUpdatedAt(sets, { alsoChanged: ticketTypesChanged })} WHERE id = $1`,
      params,
    );
  }

  /** The ticket types of these events, oldest first, grouped by event. */
  async ticketTypes(
    eventIds: string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Map<string, TicketTypeRow[]>> {
    const grouped = new Map<string, TicketTypeRow[]>(eventIds.map((id) => [id, []]));
    if (eventIds.length === 0) return grouped;
    const rows: TicketTypeRow[] = await manager.query(
      `SELECT ${TYPE_COLUMNS} FROM ticket_types WHERE event_id = ANY($1::uuid[]) ORDER BY seq`,
      [eventIds],
    );
    for (const row of rows) grouped.get(row.eventId)!.push(toTicketType(row));
    return grouped;
  }

  /** Changes a ticket type of the event; the quantity never below sold + held. False when that does not hold. */
  async updateTicketType(
    manager: EntityManager,
    eventId: string,
    id: string,
    changes: { name?: string; quantity?: number; maxPerOrder?: number },
  ): Promise<boolean> {
    const [rows]: [unknown[], number] = await manager.query(
      `UPDATE ticket_types SET name = COALESCE($3, name), quantity = COALESCE($4, quantity),
         max_per_order = COALESCE($5, max_per_order)
       WHERE event_id = $1 AND id = $2 AND sold + held <= COALESCE($4, quantity) RETURNING id`,
      [eventId, id, changes.name ?? null, changes.quantity ?? null, changes.maxPerOrder ?? null],
    );
    return rows.length > 0;
  }

  // ---- seats

  /**
   * Holds `n` seats in the caller's transaction, sent with the commit (deferred). The database
   * refuses more than are left: the CHECK `ticket_types_never_oversold` (sold + held <= quantity)
   * fails the statement, and so the commit (see isOversold), and concurrent holds queue on the
   * row lock, so that they never take more than the quantity together.
   */
  async hold(manager: EntityManager, ticketTypeId: string, n: number): Promise<void> {
    await deferStatement(manager, `UPDATE ticket_types SET held = held + $2 WHERE id = $1`, [ticketTypeId, n]);
  }

  /** Seats left now of each of these ticket types (to tell a refused hold what is left). */
  async seatsLeft(ticketTypeIds: string[]): Promise<Map<string, number>> {
    const rows: Array<{ id: string; left: number }> = await this.dataSource.query(
      `SELECT id, quantity - sold - held AS "left" FROM ticket_types WHERE id = ANY($1::uuid[])`,
      [ticketTypeIds],
    );
    return new Map(rows.map((row) => [row.id, row.left]));
  }

  /** Moves seats of one ticket type: held to sold (sell), held back (release), or sold back (unsell). */
  async moveSeats(
    manager: EntityManager,
    ticketTypeId: string,
    n: number,
    move: 'sell' | 'release' | 'unsell',
  ): Promise<void> {
    const set = {
      sell: 'held = held - $2, sold = sold + $2',
      release: 'held = held - $2',
      unsell: 'sold = sold - $2',
    }[move];
    // Deferred: sent with the commit, which fails if the seat counts' checks do.
    await deferStatement(manager, `UPDATE ticket_types SET ${set} WHERE id = $1`, [ticketTypeId, n]);
  }
}

function toTicketType(row: TicketTypeRow): TicketTypeRow {
  return { ...row, price: centsFromDb(row.price) };
}

/** A hold refused by the database: more seats than were left (the CHECK `ticket_types_never_oversold`). */
export function isOversold(error: unknown): boolean {
  return isCheckViolation(error, 'ticket_types_never_oversold');
}
