import { startApiProcess } from '../support/api-process';
import { createSeller, createUser } from '../support/identity';
import { HttpClient } from '../support/http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The ledger under concurrency: two API processes on one database, 16 clients firing 2,000
 * random deposits, payments and transfers among 10 virtual accounts. Afterwards the books
 * must balance exactly, whatever the interleaving.
 */
describe('ledger under concurrency (two API processes)', () => {
  let t: TestApp;
  let processes: Array<{ baseUrl: string; stop(): Promise<void> }> = [];

  beforeAll(async () => {
    t = await startTestApp();
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

    const totals = { deposits: 0, payments: 0, external: 0 };
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
        let action: string;
        let body: object;
        let kind: 'deposits' | 'payments' | 'external' | null;
        if (roll < 0.3) {
          [action, body, kind] = ['deposit', { amount: money }, 'deposits'];
        } else if (roll < 0.5) {
          [action, body, kind] = [
            'pay',
            { amount: money, payee: { name: 'Bill' }, barcode: '1'.repeat(44) },
            'payments',
          ];
        } else if (roll < 0.85) {
          const target = pick(accounts.filter((a) => a !== account));
          [action, body, kind] = ['transfer', { amount: money, destination: { virtual_account: target } }, null];
        } else {
          [action, body, kind] = [
            'transfer',
            { amount: money, destination: { pix_key: 'out@example.com' } },
            'external',
          ];
        }
        const res = await http.post(`${base}/${account}/${action}`, body, { token: superuser.access });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 201) {
          if (kind) totals[kind] += cents;
        } else if (!(res.status === 400 && res.body.code === 'insufficient_funds')) {
          otherErrors.push(`${res.status} ${res.text}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => worker(i)));

    expect(otherErrors).toEqual([]);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    expect(statuses.get(201)).toBeGreaterThan(1_000);

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
    // the total held equals deposits minus payments minus external transfers
    const held = await t.db.query(`SELECT sum(balance)::bigint AS total FROM ledger_accounts WHERE id = ANY($1)`, [
      accounts,
    ]);
    expect(Number(held.rows[0].total)).toBe(totals.deposits - totals.payments - totals.external);
  }, 300_000);
});
