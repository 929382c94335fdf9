import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb, Cents } from '../common/money/money';
import { keysetSql, PageRequest } from '../common/pagination/pagination';

export type DepositMethod = 'pix' | 'boleto' | 'manual';
export type DepositStatus = 'pending' | 'completed' | 'expired';

export interface DepositRow {
  id: string;
  seq: string;
  sellerId: string;
  accountId: string;
  method: DepositMethod;
  status: DepositStatus;
  amount: Cents;
  description: string | null;
  reason: string | null;
  externalReference: string | null;
  pix: { qr_code: string; expires_at: string } | null;
  boleto: { digitable_line: string; due_date: string } | null;
  expiresAt: Date | null;
  /** The deposit's posting on the virtual account, once completed. */
  postingId: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  expiredAt: Date | null;
}

export interface NewDeposit {
  id: string;
  sellerId: string;
  accountId: string;
  method: DepositMethod;
  amount: Cents;
  description: string | null;
  reason: string | null;
  externalReference: string | null;
  pix: DepositRow['pix'];
  boleto: DepositRow['boleto'];
  expiresAt: Date | null;
  /** Set for a deposit completed as it is recorded (manual): the entry that posted it. */
  completion: { entryId: string; at: Date } | null;
}

interface DepositDbRow {
  id: string;
  seq: string;
  seller_id: string;
  account_id: string;
  method: DepositMethod;
  status: DepositStatus;
  amount: string;
  description: string | null;
  reason: string | null;
  external_reference: string | null;
  pix: DepositRow['pix'];
  boleto: DepositRow['boleto'];
  expires_at: Date | null;
  posting_id: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  expired_at: Date | null;
}

const COLUMNS = `d.*, (SELECT l.id FROM ledger_lines l WHERE l.entry_id = d.entry_id AND l.type = 'deposit') AS posting_id`;

/** Deposits into virtual accounts: pending until paid in, completed with their posting, or expired. */
@Injectable()
export class DepositsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, deposit: NewDeposit): Promise<DepositRow> {
    const rows: DepositDbRow[] = await manager.query(
      // A deposit completed as it is written (manual) is created at the instant it completes.
      `INSERT INTO deposits AS d (id, seller_id, account_id, method, status, amount, description, reason,
                                  external_reference, pix, boleto, expires_at, entry_id, completed_at,
                                  created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
               COALESCE($14::timestamptz, now()), COALESCE($14::timestamptz, now()))
       RETURNING ${COLUMNS}`,
      [
        deposit.id,
        deposit.sellerId,
        deposit.accountId,
        deposit.method,
        deposit.completion ? 'completed' : 'pending',
        deposit.amount,
        deposit.description,
        deposit.reason,
        deposit.externalReference,
        deposit.pix,
        deposit.boleto,
        deposit.expiresAt,
        deposit.completion?.entryId ?? null,
        deposit.completion?.at ?? null,
      ],
    );
    return toDeposit(rows[0]);
  }

  async findForAccount(sellerId: string, accountId: string, id: string): Promise<DepositRow | null> {
    const rows: DepositDbRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM deposits d WHERE d.seller_id = $1 AND d.account_id = $2 AND d.id = $3`,
      [sellerId, accountId, id],
    );
    return rows[0] ? toDeposit(rows[0]) : null;
  }

  /** The seller of a deposit, for authorising a caller who knows only its id. */
  async sellerOf(id: string): Promise<string | null> {
    const rows: Array<{ seller_id: string }> = await this.dataSource.query(
      `SELECT seller_id FROM deposits WHERE id = $1`,
      [id],
    );
    return rows[0]?.seller_id ?? null;
  }

  async lockById(manager: EntityManager, id: string): Promise<DepositRow | null> {
    const rows: DepositDbRow[] = await manager.query(`SELECT ${COLUMNS} FROM deposits d WHERE d.id = $1 FOR UPDATE`, [
      id,
    ]);
    return rows[0] ? toDeposit(rows[0]) : null;
  }

  async listForAccount(
    accountId: string,
    filters: { status?: DepositStatus },
    page: PageRequest,
  ): Promise<DepositRow[]> {
    const params: unknown[] = [accountId];
    const where = ['d.account_id = $1'];
    if (filters.status) where.push(`d.status = $${params.push(filters.status)}`);
    const keyset = keysetSql('d.seq', page, params);
    if (keyset.condition) where.push(keyset.condition);
    const rows: DepositDbRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM deposits d WHERE ${where.join(' AND ')} ${keyset.orderAndLimit}`,
      params,
    );
    return rows.map(toDeposit);
  }

  async markCompleted(manager: EntityManager, id: string, entryId: string, at: Date): Promise<DepositRow> {
    // TypeORM answers an UPDATE with [rows, count].
    const [rows]: [DepositDbRow[], number] = await manager.query(
      `UPDATE deposits AS d SET status = 'completed', entry_id = $2, completed_at = $3, updated_at = $3
       WHERE d.id = $1 RETURNING ${COLUMNS}`,
      [id, entryId, at],
    );
    return toDeposit(rows[0]);
  }

  /** Expires up to `limit` pending deposits whose time ran out by `now`, skipping any being confirmed. */
  async expireDue(manager: EntityManager, now: Date, limit: number): Promise<DepositRow[]> {
    const [rows]: [DepositDbRow[], number] = await manager.query(
      `UPDATE deposits AS d SET status = 'expired', expired_at = $1, updated_at = $1
       WHERE d.id IN (SELECT id FROM deposits WHERE status = 'pending' AND expires_at <= $1
                      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [now, limit],
    );
    return rows.map(toDeposit);
  }
}

function toDeposit(row: DepositDbRow): DepositRow {
  return {
    id: row.id,
    seq: row.seq,
    sellerId: row.seller_id,
    accountId: row.account_id,
    method: row.method,
    status: row.status,
    amount: centsFromDb(row.amount),
    description: row.description,
    reason: row.reason,
    externalReference: row.external_reference,
    pix: row.pix,
    boleto: row.boleto,
    expiresAt: row.expires_at,
    postingId: row.posting_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    expiredAt: row.expired_at,
  };
}
