import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import type { Cents } from '../common/money/money';
import { applyKeysetAfterRow, PageRequest, sellerCursorRow } from '../common/pagination/pagination';
import { deferStatement, PLANNED_PER_EXECUTION } from '../database/pipelined-client';
import { SharedConnections } from '../database/shared-connections';
import { rowGuard } from '../database/row-guard';
import { RowMapper } from '../database/row-mapper';
import type { EntryMode, PaymentType } from '../split/table';
import { SplitRule } from './entities/split-rule.entity';
import { Transaction, TransactionStatus } from './entities/transaction.entity';

/** A transaction still waiting for its processor's answer (see rowGuard: found by its id only). */
const STILL_UNANSWERED = rowGuard(`t.status = 'pending' AND t.processor_reference IS NULL`);

export interface TransactionFilters {
  status?: TransactionStatus;
  paymentType?: PaymentType;
  cardBrand?: string;
  entryMode?: EntryMode;
  source?: string;
  reference?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  amountMin?: Cents;
  amountMax?: Cents;
}

/** Rows the follow-up jobs (expiry, void acknowledgements) read at a time. */
const FOLLOW_UP_BATCH = 100;

/** SQL of unified transactions and their split rules. Every read of a seller's data names the seller. */
@Injectable()
export class TransactionsRepository {
  private readonly transactionRows: RowMapper<Transaction>;
  private readonly ruleRows: RowMapper<SplitRule>;
  /** Made once: the text of a hot statement is then the same string every time (hashed once, not per request). */
  private readonly withRulesForSellerSql: string;

  constructor(
    @InjectRepository(Transaction) private readonly transactions: Repository<Transaction>,
    @InjectRepository(SplitRule) rules: Repository<SplitRule>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sharedConnections: SharedConnections,
  ) {
    this.transactionRows = new RowMapper(transactions.metadata);
    this.ruleRows = new RowMapper(rules.metadata);
    this.withRulesForSellerSql = `SELECT ${this.transactionRows.select('t')}, ${this.ruleRows.select('r', 'r__')}
         FROM transactions t
         LEFT JOIN transaction_split_rules r ON r.transaction_id = t.id AND r.deleted_at IS NULL
        WHERE t.seller_id = $1 AND t.id = $2
        ORDER BY r.seq`;
  }

  /**
   * Writes a new transaction (id made by the caller; the database's defaults for what `data` leaves
   * out) in the caller's database transaction, sent with the commit (deferred).
   */
  async insert(manager: EntityManager, data: Partial<Transaction> & { id: string }): Promise<void> {
    const { text, values } = this.transactionRows.insert(data, this.insertSql);
    await deferStatement(manager, text, values);
  }

  private readonly insertSql = (columns: string, placeholders: string) =>
    `INSERT INTO transactions (${columns}) VALUES (${placeholders})`;

  /** The seller's transaction with its active split rules (oldest first), in one query. */
  async findWithRulesForSeller(
    sellerId: string,
    id: string,
  ): Promise<{ transaction: Transaction; rules: SplitRule[] } | null> {
    // A hot read (every detail GET) by key: plain SQL on a shared connection, a precompiled mapping.
    return this.withRules(await this.sharedConnections.query(this.withRulesForSellerSql, [sellerId, id]));
  }

  /** A transaction with its rules from rows of both (rule columns prefixed `r__`, none when it has no rule). */
  private withRules(rows: Array<Record<string, unknown>>): { transaction: Transaction; rules: SplitRule[] } | null {
    if (rows.length === 0) return null;
    return {
      transaction: this.transactionRows.map(rows[0]),
      rules: rows.filter((row) => row.r__id !== null).map((row) => this.ruleRows.map(row, 'r__')),
    };
  }

  findById(id: string): Promise<Transaction | null> {
    return this.one(this.dataSource.manager, 't.id = $1', [id]);
  }

  findForSeller(sellerId: string, id: string): Promise<Transaction | null> {
    return this.one(this.dataSource.manager, 't.seller_id = $1 AND t.id = $2', [sellerId, id]);
  }

  /** Locks the transaction row for the rest of the caller's database transaction. */
  lockForSeller(manager: EntityManager, sellerId: string, id: string): Promise<Transaction | null> {
    return this.one(manager, 't.seller_id = $1 AND t.id = $2 FOR UPDATE', [sellerId, id]);
  }

  lockById(manager: EntityManager, id: string): Promise<Transaction | null> {
    return this.one(manager, 't.id = $1 FOR UPDATE', [id]);
  }

  /** Writes the changes and answers the transaction as it now is, in one round trip. */
  async update(manager: EntityManager, id: string, changes: Partial<Transaction>): Promise<Transaction> {
    const { text, values } = this.transactionRows.update(changes, 1, this.updateSql);
    // TypeORM answers an UPDATE as [rows, affected].
    const [rows]: [Array<Record<string, unknown>>, number] = await manager.query(text, [id, ...values]);
    if (rows.length === 0) throw new Error(`No transaction ${id} to update (its caller holds its row lock)`);
    return this.transactionRows.map(rows[0]);
  }

  private readonly updateSql = (set: string) =>
    `UPDATE transactions t SET ${set} WHERE t.id = $1 RETURNING ${this.transactionRows.select('t')}`;

  /**
   * Records a processor's answer on a transaction still waiting for one (pending, no processor
   * reference), under its row lock, and answers it with its active split rules, in one
   * statement; null when it is settled already.
   */
  async settleUnanswered(
    manager: EntityManager,
    id: string,
    changes: Partial<Transaction>,
  ): Promise<{ transaction: Transaction; rules: SplitRule[] } | null> {
    const { text, values } = this.transactionRows.update(changes, 1, this.settleUnansweredSql);
    const rows: Array<Record<string, unknown>> = await manager.query(text, [id, ...values]);
    return this.withRules(rows);
  }

  private readonly settleUnansweredSql = (set: string) =>
    `WITH t AS (
       UPDATE transactions t SET ${set}
        WHERE t.id = $1 AND ${STILL_UNANSWERED} RETURNING t.*)
     SELECT ${this.transactionRows.select('t')}, ${this.ruleRows.select('r', 'r__')}
       FROM t LEFT JOIN transaction_split_rules r ON r.transaction_id = t.id AND r.deleted_at IS NULL
      ORDER BY r.seq`;

  /** The transaction matching `where` (on alias t), read without the query builder (a hot path of charges). */
  private one(manager: EntityManager, where: string, params: unknown[]): Promise<Transaction | null> {
    return this.transactionRows.one(manager, 't', where, params);
  }

  /**
   * Charges unresolved for longer than a charge takes, oldest first (after the charge `startAfter`
   * when given), read in batches: card ones still pending, pix and boleto ones still without the
   * processor's payment instructions.
   */
  interruptedCharges(olderThanMinutes: number, startAfter: string | null = null): AsyncGenerator<{ id: string }> {
    return this.inBatches(
      `SELECT id FROM transactions
        WHERE status = 'pending' AND (payment_type IN ('credit', 'debit') OR processor_reference IS NULL)
          AND created_at < now() - make_interval(mins => $2)
          AND ($1::uuid IS NULL OR (created_at, id) > (SELECT created_at, id FROM transactions WHERE id = $1))
        ORDER BY created_at, id`,
      [olderThanMinutes],
      startAfter,
    );
  }

  /**
   * Pending pix and boleto charges whose window to be paid ended by `now`, of the sources whose
   * charges the transactions service expires itself (the API's and the demo seed's; a checkout or
   * a subscription expires its own), oldest first.
   */
  unpaidDue(now: Date): AsyncGenerator<{ id: string }> {
    return this.inBatches(
      `SELECT id FROM transactions
        WHERE status = 'pending' AND payable_until IS NOT NULL AND source IN ('api', 'seed') AND payable_until <= $2
          AND ($1::uuid IS NULL OR (payable_until, id) > (SELECT payable_until, id FROM transactions WHERE id = $1))
        ORDER BY payable_until, id`,
      [now],
    );
  }

  /**
   * Voided charges whose void the processor has not acknowledged, voided over `olderThanMinutes`
   * ago, oldest first, with the token of their latest void.
   */
  async *unacknowledgedVoids(
    olderThanMinutes: number,
  ): AsyncGenerator<{ transactionId: string; reference: string | null; token: string }> {
    const rows = this.inBatches<{ id: string; processor_reference: string | null; processor_void_token: string }>(
      `SELECT id, processor_reference, processor_void_token FROM transactions
        WHERE status = 'voided' AND processor_void_token IS NOT NULL
          AND voided_at < now() - make_interval(mins => $2)
          AND ($1::uuid IS NULL OR (voided_at, id) > (SELECT voided_at, id FROM transactions WHERE id = $1))
        ORDER BY voided_at, id`,
      [olderThanMinutes],
    );
    for await (const row of rows) {
      yield { transactionId: row.id, reference: row.processor_reference, token: row.processor_void_token };
    }
  }

  /**
   * The rows of `query` a batch at a time, each batch after the last row read (`$1`: its id; at
   * first `startAfter`, null for the first row; `params` from `$2`), so that a row the caller could
   * not change is not read again in the same walk. `query` orders its rows by the keyset it
   * compares with `$1`'s row.
   */
  private async *inBatches<T extends { id: string }>(
    query: string,
    params: unknown[],
    startAfter: string | null = null,
  ): AsyncGenerator<T> {
    let after = startAfter;
    for (;;) {
      const rows: T[] = await this.dataSource.query(`${query} LIMIT ${FOLLOW_UP_BATCH}`, [after, ...params]);
      yield* rows;
      if (rows.length < FOLLOW_UP_BATCH) return;
      after = rows[rows.length - 1].id;
    }
  }

  /**
   * Records the void job the processor has now to acknowledge (its token), in the caller's
   * database transaction. Bookkeeping of the service's own: the record's `updated_at` does not move.
   */
  async awaitVoidAcknowledgement(manager: EntityManager, id: string, token: string): Promise<void> {
    await manager.query(`UPDATE transactions SET processor_void_token = $2 WHERE id = $1`, [id, token]);
  }

  /** The processor took the void of this token: acknowledged, unless a later void was queued since. */
  async acknowledgeVoid(id: string, token: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE transactions SET processor_void_token = NULL WHERE id = $1 AND processor_void_token = $2`,
      [id, token],
    );
  }

  /**
   * A page of the seller's transactions, newest first unless asked otherwise, by creation time
   * (then by `seq`, for those created at the same instant); one index range scan, a range of
   * creation dates included; with an amount range, the scan of the amount index when few rows fall in it.
   */
  list(sellerId: string, filters: TransactionFilters, page: PageRequest): Promise<Transaction[]> {
    const q = this.transactions.createQueryBuilder('t').where('t.seller_id = :sellerId', { sellerId });
    if (filters.status) q.andWhere('t.status = :status', { status: filters.status });
    if (filters.paymentType) q.andWhere('t.payment_type = :paymentType', { paymentType: filters.paymentType });
    if (filters.cardBrand) q.andWhere('t.card_brand = :cardBrand', { cardBrand: filters.cardBrand });
    if (filters.entryMode) q.andWhere('t.entry_mode = :entryMode', { entryMode: filters.entryMode });
    if (filters.source) q.andWhere('t.source = :source', { source: filters.source });
    if (filters.reference) q.andWhere('t.reference = :reference', { reference: filters.reference });
    if (filters.createdAfter) q.andWhere('t.created_at >= :createdAfter', { createdAfter: filters.createdAfter });
    if (filters.createdBefore) q.andWhere('t.created_at < :createdBefore', { createdBefore: filters.createdBefore });
    if (filters.amountMin !== undefined) q.andWhere('t.amount >= :amountMin', { amountMin: filters.amountMin });
    if (filters.amountMax !== undefined) q.andWhere('t.amount <= :amountMax', { amountMax: filters.amountMax });
    // An amount range may select a handful of rows (the amount index) or most (the creation order):
    // which is cheaper depends on the values.
    if (filters.amountMin !== undefined || filters.amountMax !== undefined) q.comment(PLANNED_PER_EXECUTION);
    return applyKeysetAfterRow(
      q,
      ['t.created_at', 't.seq'],
      sellerCursorRow('transactions', ':keysetAfter', ':sellerId'),
      page,
    ).getMany();
  }

  // ---- split rules

  /** Active rules of these transactions, oldest first, grouped by transaction id. */
  async activeRules(transactionIds: string[], manager?: EntityManager): Promise<Map<string, SplitRule[]>> {
    const grouped = new Map<string, SplitRule[]>(transactionIds.map((id) => [id, []]));
    if (transactionIds.length === 0) return grouped;
    const rows: Array<Record<string, unknown>> = await (manager ?? this.dataSource.manager).query(
      `SELECT ${this.ruleRows.select('r')} FROM transaction_split_rules r
        WHERE r.transaction_id = ANY($1::uuid[]) AND r.deleted_at IS NULL ORDER BY r.seq`,
      [transactionIds],
    );
    for (const row of rows) {
      const rule = this.ruleRows.map(row);
      grouped.get(rule.transactionId)!.push(rule);
    }
    return grouped;
  }

  insertRule(manager: EntityManager, data: Partial<SplitRule>): Promise<SplitRule> {
    const repo = manager.getRepository(SplitRule);
    return repo.save(repo.create(data));
  }

  /** Marks a rule removed and answers it; null when the transaction has no such active rule. */
  async removeRule(manager: EntityManager, transactionId: string, ruleId: string): Promise<SplitRule | null> {
    // TypeORM answers an UPDATE as [rows, affected].
    const [rows]: [Array<Record<string, unknown>>, number] = await manager.query(
      `UPDATE transaction_split_rules r SET deleted_at = now()
        WHERE r.id = $1 AND r.transaction_id = $2 AND r.deleted_at IS NULL RETURNING ${this.ruleRows.select('r')}`,
      [ruleId, transactionId],
    );
    return rows.length > 0 ? this.ruleRows.map(rows[0]) : null;
  }
}
