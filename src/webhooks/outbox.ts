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
  'virtual_account.payment',
  'virtual_account.transfer',
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

/**
 * Writes a domain event to the outbox inside the caller's database transaction: the event
 * exists if and only if the change that caused it committed. Webhook delivery reads the
 * outbox afterwards (at-least-once).
 */
export async function recordEvent(
  manager: EntityManager,
  type: EventType,
  sellerId: string | null,
  data: object,
): Promise<RecordedEvent> {
  if (!manager.queryRunner?.isTransactionActive) {
    throw new Error(`recordEvent(${type}) must run inside the database transaction of the change it records`);
  }
  const [row] = (await manager.query(
    `INSERT INTO outbox_events (type, seller_id, data) VALUES ($1, $2, $3)
     RETURNING id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    [type, sellerId, JSON.stringify(data)],
  )) as Array<{ id: string; created_at: string }>;
  return { id: row.id, type, created_at: row.created_at };
}
