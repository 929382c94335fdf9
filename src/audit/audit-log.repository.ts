import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { keysetSql, PageRequest } from '../common/pagination/pagination';
import { deferStatement } from '../database/pipelined-client';

export interface AuditLogRow {
  id: string;
  seq: string;
  actor_kind: 'user' | 'api_key' | 'system';
  actor_id: string | null;
  action: string;
  seller_id: string | null;
  target_type: string;
  target_id: string;
  changes: Record<string, unknown>;
  request_id: string | null;
  ip: string | null;
  created_at: Date;
}

/** A row to append; `id`, `seq` and `created_at` come from the database. */
export type NewAuditLogRow = Omit<AuditLogRow, 'id' | 'seq' | 'created_at' | 'changes'> & { changes: object };

export interface AuditLogFilter {
  actorId?: string;
  sellerId?: string;
  action?: string;
  createdAfter?: Date;
}

/** Appends one row (`$1`…`$9`: actor kind and id, action, seller, target type and id, changes, request id, address). */
export const APPEND_AUDIT_ROW = `INSERT INTO audit_log (actor_kind, actor_id, action, seller_id, target_type, target_id, changes, request_id, ip)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9)`;

/**
 * SQL of `audit_log`. Rows are appended only through `recordAudit` (audit-log.ts), in the audited
 * action's transaction: the write takes the caller's manager and needs no injected state, so it is
 * static and every area can audit without importing this module.
 */
@Injectable()
export class AuditLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  static async append(manager: EntityManager, row: NewAuditLogRow): Promise<void> {
    // Nothing is read back: it leaves with the transaction's next statement or its COMMIT.
    await deferStatement(manager, APPEND_AUDIT_ROW, [
      row.actor_kind,
      row.actor_id,
      row.action,
      row.seller_id,
      row.target_type,
      row.target_id,
      JSON.stringify(row.changes),
      row.request_id,
      row.ip,
    ]);
  }

  /** One page of entries matching every given filter, by `seq` (one index range per filter). */
  list(filter: AuditLogFilter, page: PageRequest): Promise<AuditLogRow[]> {
    const params: unknown[] = [];
    const conditions: string[] = [];
    if (filter.actorId) conditions.push(`actor_id = $${params.push(filter.actorId)}`);
    if (filter.sellerId) conditions.push(`seller_id = $${params.push(filter.sellerId)}`);
    if (filter.action) conditions.push(`action = $${params.push(filter.action)}`);
    if (filter.createdAfter) conditions.push(`created_at >= $${params.push(filter.createdAfter)}`);
    const keyset = keysetSql('seq', page, params);
    if (keyset.condition) conditions.push(keyset.condition);
    return this.dataSource.query(
      `SELECT id, seq, actor_kind, actor_id, action, seller_id, target_type, target_id, changes, request_id, ip, created_at
         FROM audit_log ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''} ${keyset.orderAndLimit}`,
      params,
    );
  }
}
