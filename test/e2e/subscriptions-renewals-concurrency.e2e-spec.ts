import { cliProcess } from '../support/cli-process';
import { createUser } from '../support/identity';
import { payingSeller } from '../support/payments';
import { createSubscriptionPlan, subscribe } from '../support/subscriptions';
import { startTestApp, TestApp } from '../support/test-app';

const COUNT = 1000;

/** `npm run cli -- subscriptions:renew --now <iso>` as a real process. */
const renewProcess = (databaseUrl: string, now: string) =>
  cliProcess(databaseUrl, ['subscriptions:renew', '--now', now]);

/**
 * The renewal job under concurrency and crashes: two `subscriptions:renew` processes at once over
 * 1,000 due subscriptions charge each exactly once; a process killed with SIGKILL mid-run and a
 * second run afterwards still charge each exactly once (counted in SQL).
 */
describe('subscription renewals: concurrent and crashed workers', () => {
  let t: TestApp;
  let planId: string;
  let firstDue: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: 'true' } });
    const superuser = await createUser(t, { superuser: true });
    const { sellerId } = await payingSeller(t, superuser);
    planId = await createSubscriptionPlan(t, superuser.access, sellerId, { payment_types: ['credit'] });
    const model = await subscribe(t, planId);
    firstDue = model.next_charge_at!;
    // 999 more subscribers like the first one, due at the same time.
    await t.db.query(
      `INSERT INTO subscriptions (id, plan_id, seller_id, status, name, email, document, payment_type, card_token,
         card_brand, card_last4, card_exp_month, card_exp_year, manage_token_hash, anchor_at, trial_end, next_period,
         failed_attempts, current_period_start, current_period_end, next_charge_at)
       SELECT gen_random_uuid(), plan_id, seller_id, status, name, 'sub' || i || '@example.com', document, payment_type,
         card_token, card_brand, card_last4, card_exp_month, card_exp_year, md5(random()::text) || i, anchor_at,
         trial_end, next_period, failed_attempts, current_period_start, current_period_end, next_charge_at
       FROM subscriptions, generate_series(2, $2) AS i WHERE id = $1`,
      [model.id, COUNT],
    );
  }, 120_000);
  afterAll(() => t.close());

  /** Per subscription of the plan: charges of `period` that are paid, and every non-voided one. */
  const chargesOf = async (period: number) => {
    const { rows } = await t.db.query(
      `SELECT s.id,
              count(tx.id) FILTER (WHERE tx.status = 'approved')::int AS approved,
              count(tx.id) FILTER (WHERE tx.status <> 'voided')::int AS live
       FROM subscriptions s
       LEFT JOIN subscription_charges c ON c.subscription_id = s.id AND c.period = $2
       LEFT JOIN transactions tx ON tx.id = c.transaction_id OR tx.reference = c.id::text
       WHERE s.plan_id = $1 GROUP BY s.id`,
      [planId, period],
    );
    return rows as Array<{ id: string; approved: number; live: number }>;
  };
  const orphanCharges = async () =>
    (
      await t.db.query(
        `SELECT count(*)::int AS n FROM transactions tx WHERE tx.source = 'subscription' AND tx.status = 'approved'
           AND NOT EXISTS (SELECT 1 FROM subscription_charges c WHERE c.transaction_id = tx.id)`,
      )
    ).rows[0].n;

  it('two processes at once charge each due subscription exactly once', async () => {
    const runs = [renewProcess(t.databaseUrl, firstDue), renewProcess(t.databaseUrl, firstDue)];
    const results = await Promise.all(runs.map((r) => r.done));
    for (const result of results) expect(result).toMatchObject({ code: 0 });
    const charges = await chargesOf(1);
    expect(charges).toHaveLength(COUNT);
    expect(charges.filter((c) => c.approved !== 1 || c.live !== 1)).toEqual([]);
    expect(await orphanCharges()).toBe(0);
    const due = await t.db.query(
      `SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1 AND next_charge_at <= $2`,
      [planId, firstDue],
    );
    expect(due.rows[0].n).toBe(0);
  }, 180_000);

  it('a process killed with SIGKILL mid-run, then another run: still exactly once', async () => {
    const { rows } = await t.db.query(`SELECT min(next_charge_at) AS at FROM subscriptions WHERE plan_id = $1`, [
      planId,
    ]);
    const secondDue = rows[0].at.toISOString();
    const doomed = renewProcess(t.databaseUrl, secondDue);
    const claims = async (status: string) =>
      (
        await t.db.query(
          `SELECT count(*)::int AS n FROM subscription_charges c JOIN subscriptions s ON s.id = c.subscription_id
           WHERE s.plan_id = $1 AND c.period = 2 AND c.status = $2`,
          [planId, status],
        )
      ).rows[0].n as number;
    // Wait until it is well into charging, then kill it without warning.
    for (;;) {
      if ((await claims('approved')) >= 150) break;
      if (doomed.child.exitCode !== null)
        throw new Error(`the run ended before it could be killed: ${(await doomed.done).output}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    doomed.child.kill('SIGKILL');
    expect((await doomed.done).code).toBeNull();
    // It died with charges claimed and not settled: the next run must resolve them.
    expect(await claims('processing')).toBeGreaterThan(0);
    const partly = await chargesOf(2);
    expect(partly.filter((c) => c.approved === 1).length).toBeLessThan(COUNT);

    const rerun = await renewProcess(t.databaseUrl, secondDue).done;
    expect(rerun.code).toBe(0);
    expect(rerun.output).toMatch(/[1-9]\d* interrupted charges recovered/);
    expect(await claims('processing')).toBe(0);
    const charges = await chargesOf(2);
    expect(charges).toHaveLength(COUNT);
    expect(charges.filter((c) => c.approved !== 1 || c.live !== 1)).toEqual([]);
    expect(await orphanCharges()).toBe(0);
  }, 180_000);
});
