import { EntityManager } from 'typeorm';
import { currentPrincipal, currentRequest } from '../common/context/request-context';
import { AuditLogRepository } from './audit-log.repository';

/** Actions written to the audit log (API.md section 12). */
export type AuditAction =
  | 'user.activated'
  | 'user.deactivated'
  | 'user.superuser_granted'
  | 'user.superuser_revoked'
  | 'access.granted'
  | 'access.changed'
  | 'access.revoked'
  | 'api_key.created'
  | 'api_key.changed'
  | 'api_key.deleted'
  | 'webhook.created'
  | 'webhook.changed'
  | 'webhook.secret_rotated'
  | 'webhook.deleted'
  | 'seller.created'
  | 'seller.commercial_terms_changed'
  | 'split_plan.created'
  | 'virtual_account.manual_deposit'
  | 'virtual_account.transfer'
  | 'virtual_account.payment'
  | 'transaction.voided'
  | 'transaction.split_rule_created'
  | 'transaction.split_rule_deleted';

export interface AuditEntry {
  action: AuditAction;
  sellerId: string | null;
  target: { type: string; id: string };
  /** What changed, e.g. `{active: {from: true, to: false}}`; never secrets. */
  changes?: object;
}

/** The audit entry of a user's flag (`active`, `is_superuser`) that changed from `from` to its opposite. */
export function userFlagAudit(
  action: AuditAction,
  id: string,
  field: 'active' | 'is_superuser',
  from: boolean,
): AuditEntry {
  return { action, sellerId: null, target: { type: 'user', id }, changes: { [field]: { from, to: !from } } };
}

/**
 * Writes one audit row inside the caller's database transaction, so the row exists if and
 * only if the action committed. The actor, request id and client address come from the
 * request being served (request context); outside a request the actor is the system.
 */
export async function recordAudit(manager: EntityManager, entry: AuditEntry): Promise<void> {
  if (!manager.queryRunner?.isTransactionActive) {
    throw new Error(`recordAudit(${entry.action}) must run inside the database transaction of the action`);
  }
  const request = currentRequest();
  const principal = currentPrincipal();
  await AuditLogRepository.append(manager, {
    actor_kind: principal?.kind ?? 'system',
    actor_id: principal?.id ?? null,
    action: entry.action,
    seller_id: entry.sellerId,
    target_type: entry.target.type,
    target_id: entry.target.id,
    changes: entry.changes ?? {},
    request_id: request?.requestId ?? null,
    ip: request?.ip ?? null,
  });
}
