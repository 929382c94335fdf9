import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb, Cents } from '../common/money/money';
import type { PayoutDestination } from './banking/banking-port';

export type PayoutStatus = 'processing' | 'completed' | 'failed';

export interface PayoutRow {
  id: string;
  sellerId: string;
  accountId: string;
  /** The entry that took the money out of the account. */
  entryId: string;
  kind: 'payment' | 'transfer';
  amount: Cents;
  destination: PayoutDestination;
  status: PayoutStatus;
  provider: string;
  description: string | null;
}

interface PayoutDbRow {
  id: string;
  seller_id: string;
  account_id: string;
  entry_id: string;
  kind: 'payment' | 'transfer';
  amount: string;
  destination: PayoutDestination;
  status: PayoutStatus;
  provider: string;
  description: string | null;
}

const COLUMNS = `p.id, p.seller_id, p.account_id, p.entry_id, p.kind, p.amount, p.destination, p.status, p.provider,
  (SELECT e.description FROM journal_entries e WHERE e.id = p.entry_id) AS description`;

/** Money leaving a virtual account: posted at once, sent through the payout port, then completed or failed. */
@Injectable()
export class PayoutsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(manager: EntityManager, payout: Omit<PayoutRow, 'id' | 'status' | 'description'>): Promise<string> {
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO payouts (seller_id, account_id, entry_id, kind, amount, destination, status, provider)
       VALUES ($1, $2, $3, $4, $5, $6, 'processing', $7) RETURNING id`,
      [
        payout.sellerId,
        payout.accountId,
        payout.entryId,
        payout.kind,
        payout.amount,
        JSON.stringify(payout.destination),
        payout.provider,
      ],
    );
    return rows[0].id;
  }

  /** Payouts still processing this long after they began (the oldest `limit`): their job may be gone. */
  async findStale(olderThanMinutes: number, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM payouts WHERE status = 'processing' AND created_at < now() - make_interval(mins => $1)
       ORDER BY created_at LIMIT $2`,
      [olderThanMinutes, limit],
    );
    return rows.map((row) => row.id);
  }

  async findById(id: string): Promise<PayoutRow | null> {
    const rows: PayoutDbRow[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM payouts p WHERE p.id = $1`, [id]);
    return rows[0] ? toPayout(rows[0]) : null;
  }

  async lockById(manager: EntityManager, id: string): Promise<PayoutRow | null> {
    const rows: PayoutDbRow[] = await manager.query(`SELECT ${COLUMNS} FROM payouts p WHERE p.id = $1 FOR UPDATE`, [
      id,
    ]);
    return rows[0] ? toPayout(rows[0]) : null;
  }

  async markCompleted(manager: EntityManager, id: string, reference: string, at: Date): Promise<void> {
    await manager.query(
      `UPDATE payouts SET status = 'completed', provider_reference = $2, completed_at = $3, updated_at = $3
       WHERE id = $1`,
      [id, reference, at],
    );
  }

  async markFailed(manager: EntityManager, id: string, reason: string, reversalEntryId: string, at: Date) {
    await manager.query(
      `UPDATE payouts SET status = 'failed', failure_reason = $2, reversal_entry_id = $3, failed_at = $4, updated_at = $4
       WHERE id = $1`,
      [id, reason, reversalEntryId, at],
    );
  }
}

function toPayout(row: PayoutDbRow): PayoutRow {
  return {
    id: row.id,
    sellerId: row.seller_id,
    accountId: row.account_id,
    entryId: row.entry_id,
    kind: row.kind,
    amount: centsFromDb(row.amount),
    destination: row.destination,
    status: row.status,
    provider: row.provider,
    description: row.description,
  };
}
