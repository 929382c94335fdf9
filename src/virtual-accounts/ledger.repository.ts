import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb, Cents } from '../common/money/money';
import { keysetSql, PageRequest } from '../common/pagination/pagination';
import { commitWithStatement } from '../database/pipelined-client';
import { rowGuard } from '../database/row-guard';
import { HttpMetrics } from '../metrics/http-metrics';
import type { EventType } from '../webhooks/outbox';
import { markOutboxWritten } from '../webhooks/outbox-signal';

export type LineType = 'deposit' | 'payment' | 'transfer_out' | 'transfer_in' | 'reversal' | 'external';
export type EntryKind = 'deposit' | 'payment' | 'transfer' | 'reversal';
export type SystemAccount = 'external:deposits' | 'external:payments' | 'external:transfers';
/** A posting's state: a payout's while it is one, else completed. */
export type PostingStatus = 'processing' | 'completed' | 'failed';

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

/** A line as written: what ledger_post answers. */
export interface PostedLine {
  id: string;
  /** The line's number in its account's sequence (1, 2, …). */
  accountLine: string;
  accountId: string;
  /** The seller owning the line's account (null for system accounts). */
  sellerId: string | null;
  entryId: string;
  type: LineType;
  amount: Cents;
  balanceAfter: Cents;
  description: string | null;
  counterparty: Record<string, unknown> | null;
  createdAt: Date;
}

/** A line of a virtual account's statement, with the state of the payout it belongs to. */
export interface PostingRow extends PostedLine {
  status: PostingStatus;
  failureReason: string | null;
}

export interface NewLine {
  accountId: string;
  type: LineType;
  /** Signed cents: positive adds to the account, negative takes from it. */
  amount: Cents;
  counterparty: object | null;
}

export type Refusal = 'insufficient_funds' | 'account_not_found' | 'destination_not_found' | 'balance_limit';

const REFUSALS: Record<string, Refusal> = {
  LD001: 'insufficient_funds',
  LD002: 'account_not_found',
  LD003: 'destination_not_found',
  ledger_accounts_balance_limit: 'balance_limit',
};

interface AccountDbRow {
  id: string;
  seller_id: string;
  name: string;
  balance: string;
  currency: string;
  seq: string;
  created_at: Date;
  updated_at: Date;
}

interface LineDbRow {
  id: string;
  account_line: string;
  account_id: string;
  seller_id: string | null;
  entry_id: string;
  type: LineType;
  amount: string;
  balance_after: string | null;
  description: string | null;
  counterparty: Record<string, unknown> | null;
  created_at: Date;
}

interface PostingDbRow extends LineDbRow {
  status: PostingStatus;
  failure_reason: string | null;
}

const POSTING_COLUMNS = `l.id, l.account_line, l.account_id, a.seller_id, l.entry_id, l.type, l.amount, l.balance_after,
  l.counterparty, l.created_at, e.description, coalesce(p.status, 'completed') AS status, p.failure_reason`;
const POSTING_FROM = `ledger_lines l JOIN journal_entries e ON e.id = l.entry_id
  JOIN ledger_accounts a ON a.id = l.account_id LEFT JOIN payouts p ON p.entry_id = l.entry_id`;

/** Cents as the API writes money (formatMoney, src/common/money/money.ts) for a non-negative bigint column. */
const MONEY_TEXT = (cents: string) => `(${cents} / 100)::text || '.' || lpad((${cents} % 100)::text, 2, '0')`;

/**
 * One movement, posted: $1 kind, $2 seller, $3 acting account, $4 description, $5 external
 * reference, $6 the lines (JSON), with its outbox events in the same statement when $7 (the
 * event type) is set: one per virtual-account line, whose data is the line's posting view
 * (PostingResponseDto.of; $8 its status), so the movement needs nothing from this process
 * between its lines and its events. The seller of each line's account is read by its primary
 * key: a join with the function's rows (planned as 1,000 of them) read the whole accounts table
 * on every posting. Exported for the ledger benchmark, which runs it through pgbench.
 */
export const POST_MOVEMENT = `WITH posted AS (
    SELECT l.*, (SELECT a.seller_id FROM ledger_accounts a WHERE a.id = l.account_id) AS seller_id,
      $4::text AS description
    FROM ledger_post($1, $2, $3, $4, $5, $6) AS l
  ), events AS (
    INSERT INTO outbox_events (type, seller_id, data)
    SELECT $7::text, p.seller_id, jsonb_build_object(
      'id', p.id, 'virtual_account', p.account_id, 'type', p.type, 'amount', ${MONEY_TEXT('abs(p.amount)')},
      'balance_after', ${MONEY_TEXT('p.balance_after')}, 'description', p.description, 'counterparty', p.counterparty,
      'journal_entry', p.entry_id, 'status', $8::text, 'failure_reason', NULL,
      'created_at', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    FROM posted p WHERE $7::text IS NOT NULL AND p.type <> 'external'
  )
  SELECT * FROM posted`;

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
    const rows: AccountDbRow[] = await this.dataSource.query(
      `SELECT * FROM ledger_accounts WHERE id = $2 AND ${rowGuard(`kind = 'virtual' AND seller_id = $1`)}`,
      [sellerId, id],
    );
    return rows[0] ? toAccount(rows[0]) : null;
  }

  async listVirtualAccounts(sellerId: string, page: PageRequest): Promise<VirtualAccountRow[]> {
    const params: unknown[] = [sellerId];
    const keyset = keysetSql('seq', page, params);
    const rows: AccountDbRow[] = await this.dataSource.query(
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
   * Posts one movement with the database function ledger_post (migrations/1763800100001-ledger-functions.sql):
   * balances moved in ascending id order, journal entry and lines, and the movement's posting
   * events (`events`: each virtual-account line's posting view with that status, as
   * PostingResponseDto.of writes it), in one statement of the caller's transaction. With `last`,
   * the statement is the transaction's last and takes the COMMIT with it (commitWithStatement):
   * the accounts' rows are locked only while PostgreSQL runs it. Answers the lines written, or the
   * reason the movement was refused (the transaction is then aborted: the caller must end it).
   */
  async post(
    manager: EntityManager,
    movement: {
      kind: EntryKind;
      sellerId: string;
      actingAccountId: string;
      description: string | null;
      externalReference: string | null;
      lines: NewLine[];
      events?: { type: EventType; status: PostingStatus };
    },
    options: { last?: boolean } = {},
  ): Promise<PostedLine[] | Refusal> {
    const values = [
      movement.kind,
      movement.sellerId,
      movement.actingAccountId,
      movement.description,
      movement.externalReference,
      JSON.stringify(
        movement.lines.map((l) => ({
          account_id: l.accountId,
          type: l.type,
          amount: l.amount,
          counterparty: l.counterparty,
        })),
      ),
      movement.events?.type ?? null,
      movement.events?.status ?? null,
    ];
    try {
      if (movement.events) markOutboxWritten(manager);
      const rows: LineDbRow[] = options.last
        ? await commitWithStatement(manager, POST_MOVEMENT, values)
        : await manager.query(POST_MOVEMENT, values);
      this.metrics.ledgerPosted(movement.kind);
      return rows.map(toLine);
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
    // No visibility horizon is needed for clients that poll with created_after: ledger_post stamps
    // a line (clock_timestamp()) after it has locked its account, a lock held until commit, so the
    // next line of the account is stamped after this one committed. No line can still commit with
    // a created_at (or account_line) before one already visible, and a write is seen at once.
    const params: unknown[] = [accountId];
    const where = ['l.account_id = $1'];
    if (filters.type) where.push(`l.type = $${params.push(filters.type)}`);
    if (filters.createdAfter) where.push(`l.created_at >= $${params.push(filters.createdAfter)}`);
    if (filters.createdBefore) where.push(`l.created_at < $${params.push(filters.createdBefore)}`);
    const keyset = keysetSql('l.account_line', page, params);
    if (keyset.condition) where.push(keyset.condition);
    const rows: PostingDbRow[] = await this.dataSource.query(
      `SELECT ${POSTING_COLUMNS} FROM ${POSTING_FROM} WHERE ${where.join(' AND ')} ${keyset.orderAndLimit}`,
      params,
    );
    return rows.map(toPosting);
  }

  /** The virtual-account postings of one journal entry, as they stand in the caller's transaction. */
  async postingsOfEntry(manager: EntityManager, entryId: string): Promise<PostingRow[]> {
    const rows: PostingDbRow[] = await manager.query(
      `SELECT ${POSTING_COLUMNS} FROM ${POSTING_FROM} WHERE l.entry_id = $1 AND l.type <> 'external' ORDER BY l.id`,
      [entryId],
    );
    return rows.map(toPosting);
  }
}

function toAccount(row: AccountDbRow): VirtualAccountRow {
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

function toLine(row: LineDbRow): PostedLine {
  return {
    id: row.id,
    accountLine: row.account_line,
    accountId: row.account_id,
    sellerId: row.seller_id,
    entryId: row.entry_id,
    type: row.type,
    amount: centsFromDb(row.amount),
    balanceAfter: row.balance_after === null ? 0 : centsFromDb(row.balance_after),
    description: row.description,
    counterparty: row.counterparty,
    createdAt: row.created_at,
  };
}

function toPosting(row: PostingDbRow): PostingRow {
  return { ...toLine(row), status: row.status, failureReason: row.failure_reason };
}
