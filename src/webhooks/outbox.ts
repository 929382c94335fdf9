import { EntityManager } from 'typeorm';
import { deferStatement } from '../database/pipelined-client';
import { markOutboxWritten } from './outbox-signal';

/** Every event type the service emits (API.md section 5), with what it means for a seller. */
export const EVENT_TYPE_DESCRIPTIONS = {
  'transaction.created': 'A transaction was created (its status may still be pending).',
  'transaction.approved': 'A transaction was approved by the processor or a confirmed payment.',
  'transaction.declined': 'A transaction was declined.',
  'transaction.voided': 'A transaction was voided (refunded).',
  'transaction.split_rule.created': 'A split rule was added to a transaction.',
  'transaction.split_rule.deleted': 'A split rule was removed from a transaction.',
  'virtual_account.deposit': 'Money was deposited into a virtual account.',
  'virtual_account.deposit.expired': 'A pending deposit into a virtual account expired unpaid.',
  'virtual_account.payment': 'A payment was made from a virtual account.',
  'virtual_account.transfer': 'Money was transferred between virtual accounts.',
  'virtual_account.payout.failed': 'A payout from a virtual account failed and its money was returned.',
  'checkout.completed': 'A public checkout (ticketed event) was paid.',
  'checkout.expired': 'A public checkout expired before it was paid.',
  'subscription.created': 'A subscription was created.',
  'subscription.charged': 'A subscription period was charged.',
  'subscription.past_due': 'A subscription charge failed; the subscription is past due.',
  'subscription.canceled': 'A subscription was canceled.',
  'webhook.test': 'A test event sent on request to one endpoint.',
} as const;

export type EventType = keyof typeof EVENT_TYPE_DESCRIPTIONS;

export const EVENT_TYPES = Object.keys(EVENT_TYPE_DESCRIPTIONS) as EventType[];

export interface RecordedEvent {
  id: string;
  type: EventType;
  created_at: string;
}

export interface NewEvent {
  type: EventType;
  sellerId: string | null;
  data: object;
}

/**
 * Writes domain events to the outbox inside the caller's database transaction: an event
 * exists if and only if the change that caused it committed. Webhook delivery reads the
 * outbox afterwards (at-least-once). The insert is deferred (deferStatement): it travels with
 * the commit, which fails if it did.
 */
export async function recordEvents(manager: EntityManager, events: NewEvent[]): Promise<void> {
  const insert = outboxInsert(manager, events);
  if (insert) await deferStatement(manager, insert.text, insert.values);
}

/** One event; see recordEvents. */
export function recordEvent(
  manager: EntityManager,
  type: EventType,
  sellerId: string | null,
  data: object,
): Promise<void> {
  return recordEvents(manager, [{ type, sellerId, data }]);
}

/** One event whose id the caller needs at once (written like recordEvents, but waited for). */
export async function recordEventNow(
  manager: EntityManager,
  type: EventType,
  sellerId: string | null,
  data: object,
): Promise<RecordedEvent> {
  const insert = outboxInsert(manager, [{ type, sellerId, data }])!;
  const rows = (await manager.query(
    `${insert.text} RETURNING id, type, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    insert.values,
  )) as RecordedEvent[];
  return rows[0];
}

function outboxInsert(manager: EntityManager, events: NewEvent[]): { text: string; values: unknown[] } | null {
  if (!manager.queryRunner?.isTransactionActive) {
    throw new Error(
      `recordEvents(${events.map((e) => e.type).join(', ')}) must run inside the database transaction of the change it records`,
    );
  }
  if (events.length === 0) return null;
  markOutboxWritten(manager);
  const values: unknown[] = [];
  // A seller or a record several events share (a charge's `transaction.created` and
  // `transaction.approved`) is sent once: serialised once, and parsed once by the server.
  const sellers = new Map<string | null, number>();
  const records = new Map<object, number>();
  const once = <K>(sent: Map<K, number>, key: K, value: () => unknown): number => {
    let at = sent.get(key);
    if (at === undefined) sent.set(key, (at = values.push(value())));
    return at;
  };
  const tuples = events.map((event) => {
    const type = values.push(event.type);
    const seller = once(sellers, event.sellerId, () => event.sellerId);
    const data = once(records, event.data, () => JSON.stringify(event.data));
    return `($${type}, $${seller}::uuid, $${data}::jsonb)`;
  });
  return { text: `INSERT INTO outbox_events (type, seller_id, data) VALUES ${tuples.join(', ')}`, values };
}
