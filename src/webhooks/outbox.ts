import { EntityManager } from 'typeorm';

/** Every event type the service emits (API.md section 5). */
export const EVENT_TYPES = [
  'transaction.created',
  'transaction.approved',
  'transaction.declined',
  'transaction.voided',
  'transaction.split_rule.created',
  'transaction.split_rule.deleted',
  'virtual_account.deposit',
  'virtual_account.deposit.expired',
  'virtual_account.payment',
  'virtual_account.transfer',
  'virtual_account.payout.failed',
  'checkout.completed',
  'subscription.created',
  'subscription.charged',
  'subscription.past_due',
  'subscription.canceled',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

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
 * outbox afterwards (at-least-once).
 */
export async function recordEvents(manager: EntityManager, events: NewEvent[]): Promise<RecordedEvent[]> {
  if (!manager.queryRunner?.isTransactionActive) {
    throw new Error(
      `recordEvents(${events.map((e) => e.type).join(', ')}) must run inside the database transaction of the change it records`,
    );
  }
  if (events.length === 0) return [];
  const values: unknown[] = [];
  const tuples = events.map((event) => {
    const at = values.push(event.type, event.sellerId, JSON.stringify(event.data));
    return `($${at - 2}, $${at - 1}::uuid, $${at}::jsonb)`;
  });
  const rows = (await manager.query(
    `INSERT INTO outbox_events (type, seller_id, data) VALUES ${tuples.join(', ')}
     RETURNING id, type, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    values,
  )) as RecordedEvent[];
  return rows;
}

/** One event; see recordEvents. */
export async function recordEvent(
  manager: EntityManager,
  type: EventType,
  sellerId: string | null,
  data: object,
): Promise<RecordedEvent> {
  const [recorded] = await recordEvents(manager, [{ type, sellerId, data }]);
  return recorded;
}
