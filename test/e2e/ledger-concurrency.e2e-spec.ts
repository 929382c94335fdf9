import { startApiProcess } from '../support/api-process';
import { createSeller, createUser } from '../support/identity';
import { HttpClient } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The ledger under concurrency: two API processes on one database, 16 clients firing 2,000
 * random deposits (pix, confirmed through both processes at once: one completion each),
 * payments, internal transfers and payouts (some to the sandbox's failing PIX key, reversed by
 * the payout job running meanwhile) among 10 virtual accounts. Afterwards the books must balance
 * exactly, whatever the interleaving.
 */
describe('ledger under concurrency (two API processes)', () => {
  let t: TestApp;
  let processes: Array<{ baseUrl: string; stop(): Promise<void> }> = [];

  beforeAll(async () => {
    t = await startTestApp({ runWorkers: true });
    processes = await Promise.all([startApiProcess(t.databaseUrl), startApiProcess(t.databaseUrl)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await t.close();
  });

  it('keeps every entry balanced, every balance non-negative and equal to its lines, and the total exact', async () => {
    const superuser = await createUser(t, { superuser: true });
    const seller = await createSeller(t, superuser);
    const accounts: string[] = [];
    for (let i = 0; i < 10; i++) {
      accounts.push(
        (await t.http.post(`/sellers/${seller}/subaccounts`, { name: `VA ${i}` }, { token: superuser.access })).body.id,
      );
    }
    const clients = processes.map((p) => new HttpClient(p.baseUrl));
    const base = `/uniconta/seller/${seller}/virtualaccounts`;

    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)];
    const amount = () => (1 + Math.floor(random() * 5_000)) / 100;

    const totals = { deposits: 0, payments: 0, external: 0, failing: 0 };
    let failingPayouts = 0;
    const statuses = new Map<number, number>();
    const otherErrors: string[] = [];
    let next = 0;
    const TOTAL = 2_000;

    const worker = async (index: number) => {
      const http = clients[index % clients.length];
      while (next < TOTAL) {
        next += 1;
        const account = pick(accounts);
        const value = amount();
        const cents = Math.round(value * 100);
        const money = value.toFixed(2);
        const roll = random();
        const count = (res: { status: number; text: string; body: { code?: string } }, ok: number) => {
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === ok) return true;
          if (!(res.status === 400 && res.body.code === 'insufficient_funds'))
            otherErrors.push(`${res.status} ${res.text}`);
          return false;
        };
        if (roll < 0.3) {
          const created = await http.post(`${base}/${account}/deposit`, { amount: money }, { token: superuser.access });
          if (!count(created, 201)) continue;
          // The payment is confirmed twice at once, through both processes: it is posted once.
          const confirmations = await Promise.all(
            clients.map((client) =>
              client.post(`/sandbox/deposits/${created.body.id}/confirm`, undefined, { token: superuser.access }),
            ),
          );
          const codes = confirmations.map((c) => c.status).sort();
          if (codes.join() === '200,409') totals.deposits += cents;
          else otherErrors.push(`confirmations ${codes.join()}: ${confirmations.map((c) => c.text).join(' | ')}`);
          continue;
        }
        let action: string;
        let body: object;
        let kind: 'payments' | 'external' | 'failing' | null;
        if (roll < 0.5) {
          [action, body, kind] = [
            'pay',
            { amount: money, payee: { name: 'Bill' }, barcode: '1'.repeat(44) },
            'payments',
          ];
        } else if (roll < 0.8) {
          const target = pick(accounts.filter((a) => a !== account));
          [action, body, kind] = ['transfer', { amount: money, destination: { virtual_account: target } }, null];
        } else if (roll < 0.93) {
          [action, body, kind] = [
            'transfer',
            { amount: money, destination: { pix_key: 'out@example.com' } },
            'external',
          ];
        } else {
          [action, body, kind] = [
            'transfer',
            { amount: money, destination: { pix_key: 'fail@sandbox.test' } },
            'failing',
          ];
        }
        const res = await http.post(`${base}/${account}/${action}`, body, { token: superuser.access });
        if (count(res, 201) && kind) {
          totals[kind] += cents;
          if (kind === 'failing') failingPayouts += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => worker(i)));

    expect(otherErrors).toEqual([]);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    expect(statuses.get(201)).toBeGreaterThan(1_000);
    expect(failingPayouts).toBeGreaterThan(0);

    // every payout is settled by the payout job: the sandbox completes them within seconds
    for (let attempt = 0; ; attempt++) {
      const processing = await t.db.query(`SELECT count(*)::int AS n FROM payouts WHERE status = 'processing'`);
      if (processing.rows[0].n === 0) break;
      if (attempt >= 1200) throw new Error(`${processing.rows[0].n} payouts still processing after 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const payouts = await t.db.query(
      `SELECT status, count(*)::int AS n, count(reversal_entry_id)::int AS reversed FROM payouts GROUP BY status ORDER BY status`,
    );
    expect(payouts.rows).toEqual([
      { status: 'completed', n: expect.any(Number), reversed: 0 },
      { status: 'failed', n: failingPayouts, reversed: failingPayouts },
    ]);
    const deposits = await t.db.query(
      `SELECT status, sum(amount)::bigint AS total, count(entry_id)::int AS posted, count(*)::int AS n FROM deposits GROUP BY status`,
    );
    expect(deposits.rows.map((r) => ({ ...r, total: Number(r.total) }))).toEqual([
      { status: 'completed', total: totals.deposits, posted: deposits.rows[0].n, n: expect.any(Number) },
    ]);

    // every journal entry sums to zero
    const unbalanced = await t.db.query(`SELECT entry_id FROM ledger_lines GROUP BY entry_id HAVING sum(amount) <> 0`);
    expect(unbalanced.rows).toEqual([]);
    // each cached balance equals the sum of its lines, and the last line's balance_after
    const mismatched = await t.db.query(
      `SELECT a.id, a.balance, coalesce(sum(l.amount), 0) AS lines FROM ledger_accounts a
       LEFT JOIN ledger_lines l ON l.account_id = a.id
       WHERE a.kind = 'virtual' AND a.id = ANY($1)
       GROUP BY a.id, a.balance HAVING a.balance <> coalesce(sum(l.amount), 0)`,
      [accounts],
    );
    expect(mismatched.rows).toEqual([]);
    // no balance ever went negative, and each account's lines chain without a gap
    const negative = await t.db.query(
      `SELECT count(*)::int AS n FROM ledger_lines WHERE account_id = ANY($1) AND balance_after < 0`,
      [accounts],
    );
    expect(negative.rows[0].n).toBe(0);
    const broken = await t.db.query(
      `SELECT account_id FROM (
         SELECT account_id, account_line, balance_after, amount,
                lag(balance_after, 1, 0::bigint) OVER (PARTITION BY account_id ORDER BY account_line) AS previous,
                row_number() OVER (PARTITION BY account_id ORDER BY account_line) AS n
         FROM ledger_lines WHERE account_id = ANY($1)) x
       WHERE balance_after <> previous + amount OR account_line <> n`,
      [accounts],
    );
    expect(broken.rows).toEqual([]);
    // the total held equals deposits minus payments minus completed external transfers (failed ones came back)
    const held = await t.db.query(`SELECT sum(balance)::bigint AS total FROM ledger_accounts WHERE id = ANY($1)`, [
      accounts,
    ]);
    expect(Number(held.rows[0].total)).toBe(totals.deposits - totals.payments - totals.external);
    // the books: all lines sum to zero, and each outside-world account holds exactly what crossed it
    const books = await t.db.query(
      `SELECT coalesce(a.code, 'virtual') AS account, sum(l.amount)::bigint AS total
       FROM ledger_lines l JOIN ledger_accounts a ON a.id = l.account_id GROUP BY 1 ORDER BY 1`,
    );
    expect(books.rows.map((r) => [r.account, Number(r.total)])).toEqual([
      ['external:deposits', -totals.deposits],
      ['external:payments', totals.payments],
      ['external:transfers', totals.external],
      ['virtual', totals.deposits - totals.payments - totals.external],
    ]);
  }, 300_000);
});
