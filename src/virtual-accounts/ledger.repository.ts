import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb, Cents } from '../common/money/money';
import { keysetSql, PageRequest } from '../common/pagination/pagination';

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

/** The SQL of the ledger. Virtual-account reads name the seller; writes run in the caller's transaction. */
@Injectable()
export class LedgerRepository {
  private systemIds?: Map<SystemAccount, string>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async openVirtualAccount(manager: EntityManager, account: { id: string; sellerId: string; name: string }): Promise<void> {
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
   * Moves a virtual account's cached balance by `delta` and takes its next line number,
   * locking its row until the transaction ends. Null when the balance would go below zero.
   * Callers apply this to the accounts of a movement in ascending id order.
   */
  async moveBalance(
    manager: EntityManager,
    accountId: string,
    delta: Cents,
    owner?: string,
  ): Promise<{ balance: Cents; line: string; sellerId: string } | null> {
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows]: [Array<{ balance: string; last_line: string; seller_id: string }>, number] = await manager.query(
      `UPDATE ledger_accounts SET balance = balance + $2, last_line = last_line + 1, updated_at = now()
       WHERE id = $1 AND kind = 'virtual' AND balance + $2 >= 0 ${owner ? 'AND seller_id = $3' : ''}
       RETURNING balance, last_line, seller_id`,
      owner ? [accountId, delta, owner] : [accountId, delta],
    );
    return rows[0] ? { balance: centsFromDb(rows[0].balance), line: rows[0].last_line, sellerId: rows[0].seller_id } : null;
  }

  /**
   * Writes a journal entry and its lines in one statement; virtual-account lines carry their
   * line number and balance after. Answers the lines, with the entry's description.
   */
  async insertEntry(
    manager: EntityManager,
    entry: { kind: EntryKind; sellerId: string; description: string | null; externalReference: string | null },
    lines: Array<NewLine & { accountLine: string | null; balanceAfter: Cents | null }>,
  ): Promise<PostingRow[]> {
    const values: unknown[] = [entry.kind, entry.sellerId, entry.description, entry.externalReference];
    const tuples = lines.map((line) => {
      const at = values.push(line.accountId, line.type, line.amount, line.accountLine, line.balanceAfter, line.counterparty === null ? null : JSON.stringify(line.counterparty));
      return `($${at - 5}::uuid, $${at - 4}, $${at - 3}::bigint, $${at - 2}::bigint, $${at - 1}::bigint, $${at}::jsonb)`;
    });
    const rows = await manager.query(
      `WITH entry AS (
         INSERT INTO journal_entries (kind, seller_id, description, external_reference) VALUES ($1, $2, $3, $4)
         RETURNING id, description
       ), lines AS (
         INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after, counterparty)
         SELECT entry.id, v.* FROM entry, (VALUES ${tuples.join(', ')}) AS v(account_id, type, amount, account_line, balance_after, counterparty)
         RETURNING *
       )
       SELECT lines.*, entry.description FROM lines, entry`,
      values,
    );
    return rows.map(toPosting);
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
