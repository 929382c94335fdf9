import { DEMO_ADMIN, DEMO_SELLER, demoCurlLines, seedDemo } from '../../src/demo/seed-demo';
import { createUser, login } from '../support/identity';
import { cliProcess } from '../support/cli-process';
import { startTestApp, TestApp } from '../support/test-app';

/** `npm run cli -- seed:demo`: the demo data set, made once however often the command runs. */
describe('seed:demo', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates a superuser, a seller with plans and participants, and transactions of each payment type; twice is safe', async () => {
    const first = await seedDemo(t.app);
    expect(first.transactionsCreated).toBeGreaterThanOrEqual(4);
    const second = await seedDemo(t.app);
    expect(first.postingsCreated).toBe(3);
    expect(second).toEqual({ ...first, transactionsCreated: 0, postingsCreated: 0 });

    const { access } = await login(t, DEMO_ADMIN.email, DEMO_ADMIN.password);
    const seller = await t.http.get(`/sellers/${first.sellerId}`, { token: access });
    expect(seller.body).toMatchObject({
      rate_plan: first.ratePlanId,
      split_plan: first.splitPlanId,
      developer_account: first.developerId,
      split_participants: first.subaccounts,
    });
    const list = await t.http.get(`/unified/accounts/sellers/${first.sellerId}/transactions?limit=100`, {
      token: access,
    });
    expect(list.body.results).toHaveLength(first.transactionsCreated);
    expect(new Set(list.body.results.map((x: { payment_type: string }) => x.payment_type))).toEqual(
      new Set(['credit', 'debit', 'pix', 'boleto']),
    );
    expect(new Set(list.body.results.map((x: { status: string }) => x.status))).toEqual(
      new Set(['approved', 'declined', 'pending']),
    );
    expect((await t.db.query(`SELECT count(*)::int AS n FROM sellers`)).rows[0].n).toBe(2);

    const agent = await t.http.get(
      `/uniconta/seller/${first.sellerId}/virtualaccounts/${first.subaccounts.Agente}/postings`,
      { token: access },
    );
    expect(agent.body.results.map((p: { type: string; balance_after: string }) => [p.type, p.balance_after])).toEqual([
      ['transfer_in', '550.00'],
      ['deposit', '300.00'],
    ]);

    const lines = demoCurlLines(first, t.baseUrl);
    expect(lines.every((line) => line.includes(t.baseUrl))).toBe(true);
    expect(lines.join('\n')).toContain(first.sellerId);
  });

  it('never takes over a seller it did not make: the demo document on another seller stops it before any write', async () => {
    const other = await startTestApp();
    try {
      const superuser = await createUser(other, { superuser: true });
      const created = await other.http.post(
        '/sellers',
        { name: 'Loja Real', document: DEMO_SELLER.document, email: 'finance@loja-real.example' },
        { token: superuser.access },
      );
      expect(created.status).toBe(201);

      await expect(seedDemo(other.app)).rejects.toThrow(
        `seed:demo did not make the seller ${created.body.id} ("Loja Real", finance@loja-real.example)`,
      );
      const after = await other.http.get(`/sellers/${created.body.id}`, { token: superuser.access });
      expect(after.body).toEqual(created.body);
      const written = await other.db.query(
        `SELECT (SELECT count(*)::int FROM users WHERE email = $1) AS admins,
                (SELECT count(*)::int FROM rate_plans) AS rate_plans,
                (SELECT count(*)::int FROM sellers) AS sellers,
                (SELECT count(*)::int FROM transactions) AS transactions`,
        [DEMO_ADMIN.email],
      );
      expect(written.rows[0]).toEqual({ admins: 0, rate_plans: 0, sellers: 1, transactions: 0 });
    } finally {
      await other.close();
    }
  });

  it('refuses a --base-url that would print broken curl lines (spaces, not http)', async () => {
    for (const url of ['http://h:1/ x', 'ftp://h', 'localhost:3000']) {
      const run = await cliProcess(t.databaseUrl, ['seed:demo', '--base-url', url]).done;
      expect({ url, code: run.code }).toEqual({ url, code: 1 });
      expect(run.output).toContain('--base-url must be an http(s) URL such as http://localhost:3000');
    }
  });

  it('refuses to run in production', async () => {
    const production = await startTestApp({ env: { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40) } });
    try {
      await expect(seedDemo(production.app)).rejects.toThrow(/NODE_ENV=production/);
    } finally {
      await production.close();
    }
  });
});
