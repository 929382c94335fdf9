import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { PipelinedClient, PLANNED_PER_EXECUTION } from '../../src/database/pipelined-client';
import { TransactionsRepository } from '../../src/transactions/transactions.repository';
import { LedgerRepository } from '../../src/virtual-accounts/ledger.repository';
import { createUser } from '../support/identity';
import { payingSeller } from '../support/payments';
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

  it('a page of an amount range few transactions fall in reads the amount index, planned with its values each time', async () => {
    const superuser = await createUser(t, { superuser: true });
    const { sellerId, ratePlanId } = await payingSeller(t, superuser);
    await t.db.query(
      `INSERT INTO transactions (seller_id, amount, payment_type, installments, card_brand, card_last4, entry_mode, status,
         source, rate_plan_id, fee_percentage, fee_fixed, fee_amount, developer_amount, participants_amount, seller_net,
         processor, processor_reference, approved_at, created_at)
       SELECT $1, a, 'credit', 1, 'Visa', '1111', 'online', 'approved', 'api', $2, 0, 0, 0, 0, 0, a, 'sandbox', 'q',
         now(), now() - g * interval '1 minute'
       FROM generate_series(1, 20000) g, LATERAL (SELECT CASE WHEN g = 1 THEN 50000 ELSE 1000 END AS a) amount`,
      [sellerId, ratePlanId],
    );
    await t.db.query('ANALYZE transactions');
    const spy = jest.spyOn(PipelinedClient.prototype, 'query'); // calls through
    let sent: unknown[][];
    try {
      // More than the five executions after which a named statement may go to a generic plan.
      for (let i = 0; i < 7; i++) {
        const page = await t.http.get(`/unified/accounts/sellers/${sellerId}/transactions/?amount_min=400.00`, {
          token: superuser.access,
        });
        expect(page.body.results.map((r: { amount: string }) => r.amount)).toEqual(['500.00']);
      }
      sent = [...spy.mock.calls];
    } finally {
      spy.mockRestore();
    }
    const pages = sent.filter(([sql]) => typeof sql === 'string' && /amount"? >= \$/.test(sql));
    expect(pages).toHaveLength(7);
    for (const [sql, values] of pages as Array<[string, unknown[]]>) {
      // Sent unnamed: planned with its values, every time.
      expect(sql.startsWith(`/* ${PLANNED_PER_EXECUTION} */`)).toBe(true);
      const [{ 'QUERY PLAN': plan }] = (await t.db.query(`EXPLAIN (FORMAT JSON) ${sql}`, values)).rows;
      expect(JSON.stringify(plan)).toContain('"Index Name":"transactions_seller_amount"');
    }
  });
});
