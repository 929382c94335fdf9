import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb, Cents } from '../common/money/money';
import { keysetSql, PageRequest } from '../common/pagination/pagination';
import { HttpMetrics } from '../metrics/http-metrics';

export type LineType = 'deposit' | 'payment' | 'transfer_out' | 'transfer_in' | 'external';
export type EntryKind = 'deposit' | 'payment' | 'transfer';
export type SystemAccount = 'external:deposits' | 'external:payments' | 'external:transfers';

export interface VirtualAccountRow {
  id: string;
  sellerId: string;
  name: string;
  balance: Cents;
  currency: string;
  seq: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface PostingRow {
  id: string;
  /** The line's number in its account's sequence (1, 2, …). */
  accountLine: string;
  accountId: string;
  entryId: string;
  type: LineType;
  amount: Cents;
  balanceAfter: Cents;
  description: string | null;
  counterparty: Record<string, unknown> | null;
  createdAt: Date;
}

export interface NewLine {
  accountId: string;
  type: LineType;
  /** Signed cents: positive adds to the account, negative takes from it. */
  amount: Cents;
  counterparty: Record<string, unknown> | null;
}

export type Refusal = 'insufficient_funds' | 'account_not_found' | 'destination_not_found' | 'balance_limit';

const REFUSALS: Record<string, Refusal> = {
  LD001: 'insufficient_funds',
  LD002: 'account_not_found',
  LD003: 'destination_not_found',
  ledger_accounts_balance_limit: 'balance_limit',
};

/** The SQL of the ledger. Virtual-account reads name the seller; writes run in the caller's transaction. */
@Injectable()
export class LedgerRepository {
  private systemIds?: Map<SystemAccount, string>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
  ) {}

  async openVirtualAccount(
    manager: EntityManager,
    account: { id: string; sellerId: string; name: string },
  ): Promise<void> {
    await manager.query(`INSERT INTO ledger_accounts (id, kind, seller_id, name) VALUES ($1, 'virtual', $2, $3)`, [
      account.id,
      account.sellerId,
      account.name,
    ]);
  }

  async findVirtualAccount(sellerId: string, id: string): Promise<VirtualAccountRow | null> {
    const rows = await this.dataSource.query(
      `SELECT * FROM ledger_accounts WHERE kind = 'virtual' AND seller_id = $1 AND id = $2`,
      [sellerId, id],
    );
    return rows[0] ? toAccount(rows[0]) : null;
  }

  async listVirtualAccounts(sellerId: string, page: PageRequest): Promise<VirtualAccountRow[]> {
    const params: unknown[] = [sellerId];
    const keyset = keysetSql('seq', page, params);
    const rows = await this.dataSource.query(
      `SELECT * FROM ledger_accounts WHERE kind = 'virtual' AND seller_id = $1
       ${keyset.condition ? `AND ${keyset.condition}` : ''} ${keyset.orderAndLimit}`,
      params,
    );
    return rows.map(toAccount);
  }

  async systemAccount(code: SystemAccount): Promise<string> {
    if (!this.systemIds) {
      const rows: Array<{ id: string; code: SystemAccount }> = await this.dataSource.query(
        `SELECT id, code FROM ledger_accounts WHERE kind = 'system'`,
      );
      this.systemIds = new Map(rows.map((r) => [r.code, r.id]));
    }
    return this.systemIds.get(code)!;
  }

  /**
   * Posts one movement with the database function ledger_post (migrations): balances moved in
   * ascending id order, journal entry, lines and outbox events, in one statement. Answers the
   * lines written, or the reason the movement was refused.
   */
  async post(movement: {
    kind: EntryKind;
    sellerId: string;
    actingAccountId: string;
    description: string | null;
    externalReference: string | null;
    event: string;
    lines: NewLine[];
  }): Promise<PostingRow[] | Refusal> {
    try {
      const rows = await this.dataSource.query(
        `SELECT l.*, $4::text AS description FROM ledger_post($1, $2, $3, $4, $5, $6, $7) AS l`,
        [
          movement.kind,
          movement.sellerId,
          movement.actingAccountId,
          movement.description,
          movement.externalReference,
          movement.event,
          JSON.stringify(
            movement.lines.map((l) => ({
              account_id: l.accountId,
              type: l.type,
              amount: l.amount,
              counterparty: l.counterparty,
            })),
          ),
        ],
      );
      this.metrics.ledgerPosted(movement.kind);
      return rows.map(toPosting);
    } catch (error) {
      const driverError = (error as { driverError?: { code?: string; constraint?: string } }).driverError;
      const refusal = REFUSALS[driverError?.code ?? ''] ?? REFUSALS[driverError?.constraint ?? ''];
      if (refusal) return refusal;
      throw error;
    }
  }

  /** The statement of a virtual account: its lines, newest first by default. */
  async postings(
    accountId: string,
    filters: { type?: LineType; createdAfter?: Date; createdBefore?: Date },
    page: PageRequest,
  ): Promise<PostingRow[]> {
    const params: unknown[] = [accountId];
    const where = ['l.account_id = $1'];
    if (filters.type) where.push(`l.type = $${params.push(filters.type)}`);
    if (filters.createdAfter) where.push(`l.created_at >= $${params.push(filters.createdAfter)}`);
    if (filters.createdBefore) where.push(`l.created_at < $${params.push(filters.createdBefore)}`);
    const keyset = keysetSql('l.account_line', page, params);
    if (keyset.condition) where.push(keyset.condition);
    const rows = await this.dataSource.query(
      `SELECT l.*, e.description FROM ledger_lines l JOIN journal_entries e ON e.id = l.entry_id
       WHERE ${where.join(' AND ')} ${keyset.orderAndLimit}`,
      params,
    );
    return rows.map(toPosting);
  }
}

function toAccount(row: Record<string, any>): VirtualAccountRow {
  return {
    id: row.id,
    sellerId: row.seller_id,
    name: row.name,
    balance: centsFromDb(row.balance),
    currency: row.currency,
    seq: row.seq,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toPosting(row: Record<string, any>): PostingRow {
  return {
    id: row.id,
    accountLine: row.account_line,
    accountId: row.account_id,
    entryId: row.entry_id,
    type: row.type,
    amount: centsFromDb(row.amount),
    balanceAfter: row.balance_after === null ? 0 : centsFromDb(row.balance_after),
    description: row.description,
    counterparty: row.counterparty,
    createdAt: row.created_at,
  };
}
