import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { TransactionsRepository } from '../../src/transactions/transactions.repository';
import { LedgerRepository } from '../../src/virtual-accounts/ledger.repository';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Statements that find a row by its primary key and then check it reach it through the primary
 * key, in the plan a connection caches for its life, even on a young table (no statistics yet),
 * where a partial index whose predicate the check implies looks nearly empty (see rowGuard).
 */
describe('Query plans of lookups by key', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** The first statement `run` sends through `via` (not run: refused, and the refusal swallowed). */
  async function statementOf(
    via: { query(sql: string, params?: unknown[]): Promise<unknown> },
    run: () => Promise<unknown>,
  ): Promise<{ sql: string; count: number }> {
    let sent: { sql: string; count: number } | undefined;
    const notRun = new Error('not run');
    const spy = jest.spyOn(via, 'query').mockImplementation(async (sql: string, params?: unknown[]) => {
      sent ??= { sql, count: params?.length ?? 0 };
      throw notRun;
    });
    try {
      await run().catch((error: unknown) => {
        if (error !== notRun) throw error;
      });
    } finally {
      spy.mockRestore();
    }
    return sent!;
  }

  /** The indexes the generic plan of `statement` scans, on a connection of the test's own. */
  async function indexesScanned(statement: { sql: string; count: number }): Promise<string[]> {
    await t.db.query('SET plan_cache_mode = force_generic_plan');
    try {
      await t.db.query(`PREPARE checked AS ${statement.sql}`);
      const args = Array.from({ length: statement.count }, () => 'NULL').join(', ');
      const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) EXECUTE checked(${args})`)).rows;
      const found: string[] = [];
      const walk = (node: { 'Index Name'?: string; Plans?: unknown[] }) => {
        if (node['Index Name']) found.push(node['Index Name']);
        for (const child of node.Plans ?? []) walk(child as typeof node);
      };
      walk(plan[0].Plan);
      return found;
    } finally {
      await t.db.query('DEALLOCATE ALL');
      await t.db.query('RESET plan_cache_mode');
    }
  }

  it("a charge's settlement finds its transaction by primary key, not through transactions_unresolved_age", async () => {
    const manager = t.app.get(DataSource).manager;
    const statement = await statementOf(manager, () =>
      t.app
        .get(TransactionsRepository)
        .settleUnanswered(manager, randomUUID(), { status: 'approved', processorReference: 'x' }),
    );
    expect(statement.sql).toContain('UPDATE transactions');
    const indexes = await indexesScanned(statement);
    expect(indexes).toContain('transactions_pkey');
    expect(indexes).not.toContain('transactions_unresolved_age');
  });

  it("a virtual account of a seller is found by primary key, not by walking the seller's accounts", async () => {
    const statement = await statementOf(t.app.get(DataSource), () =>
      t.app.get(LedgerRepository).findVirtualAccount(randomUUID(), randomUUID()),
    );
    expect(await indexesScanned(statement)).toEqual(['ledger_accounts_pkey']);
  });
});
