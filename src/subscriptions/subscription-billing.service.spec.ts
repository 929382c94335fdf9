import { randomUUID } from 'node:crypto';
import { FakeProcessor, timeout } from '../../test/support/fake-processor';
import { createUser, TestUser } from '../../test/support/identity';
import { CARDS, payingSeller } from '../../test/support/payments';
import { newTestService } from '../../test/support/service-test';
import { createSubscriptionPlan, SUBSCRIBER } from '../../test/support/subscriptions';
import { changeBehindTheApp, startTestApp, TestApp } from '../../test/support/test-app';
import { PAYMENT_PROCESSOR } from '../transactions/processor/payment-processor';
import { TransactionsService } from '../transactions/transactions.service';
import type { SubscribeDto } from './dto/subscription.dto';
import { SubscriptionRenewals } from './subscription-renewals.service';
import { SubscriptionsService } from './subscriptions.service';

const signup = { subscriber: SUBSCRIBER, payment: { type: 'credit', card: CARDS.visa } } as SubscribeDto;

/**
 * Subscriptions charged through a processor fake (service tier, real PostgreSQL): what becomes
 * of a charge whose outcome is unknown, a late charge of a period charged again meanwhile, and a
 * renewal run that loses its lease.
 */
describe('subscription charges and the processor', () => {
  let t: TestApp;
  let superuser: TestUser;
  let sellerId: string;
  let processor: FakeProcessor;
  let transactions: TransactionsService;
  let subscriptions: SubscriptionsService;
  let renewals: SubscriptionRenewals;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    sellerId = (await payingSeller(t, superuser)).sellerId;
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    // Each test renews only its own subscriptions.
    await t.db.query(
      `UPDATE subscriptions SET status = 'canceled', canceled_at = now(), next_charge_at = NULL WHERE status <> 'canceled'`,
    );
    processor = new FakeProcessor();
    transactions = newTestService(t, TransactionsService, [[PAYMENT_PROCESSOR, processor]]);
    subscriptions = newTestService(t, SubscriptionsService, [[TransactionsService, transactions]]);
    renewals = newTestService(t, SubscriptionRenewals, [[TransactionsService, transactions]]);
  });

  const plan = (overrides: Record<string, unknown> = {}) =>
    createSubscriptionPlan(t, superuser.access, sellerId, { payment_types: ['credit'], ...overrides });
  const stored = async (id: string) =>
    (await t.db.query('SELECT status, void_reason, source FROM transactions WHERE id = $1', [id])).rows[0];
  const chargesOf = async (subscriptionId: string) =>
    (
      await t.db.query(
        `SELECT id, period, status, transaction_id FROM subscription_charges WHERE subscription_id = $1 ORDER BY seq`,
        [subscriptionId],
      )
    ).rows as Array<{ id: string; period: number; status: string; transaction_id: string | null }>;
  const transactionOf = async (chargeId: string): Promise<string> =>
    (await t.db.query('SELECT id FROM transactions WHERE reference = $1', [chargeId])).rows[0].id;
  const runVoidJobs = (id: string) => processor.runVoidJobs(t.db, id);
  const chargeThenTimeOut = () => {
    processor.behaviour = async (request) => {
      processor.take(request);
      throw timeout();
    };
  };

  it('a renewal run whose lease connection fails claims and charges no more; the next run charges the rest', async () => {
    const planId = await plan({ interval: 'week' });
    const first = await subscriptions.subscribe(planId, signup);
    const second = await subscriptions.subscribe(planId, signup);
    const due = new Date(new Date(second.current_period_end).getTime() + 1000);
    let cut = false;
    const cutting = Object.assign(Object.create(transactions) as TransactionsService, {
      create: async (...args: Parameters<TransactionsService['create']>) => {
        if (!cut) {
          cut = true; // the run's lease connection dies while it charges its first claim
          await t.db.query(
            `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`,
          );
        }
        return transactions.create(...args);
      },
    });
    const cutRun = newTestService(t, SubscriptionRenewals, [[TransactionsService, cutting]]);

    expect(await cutRun.run(due, { batchSize: 1, concurrency: 1 })).toMatchObject({ charged: 1, errors: 1 });
    const renewed = [...(await chargesOf(first.id)), ...(await chargesOf(second.id))].filter((c) => c.period === 1);
    expect(renewed.map((c) => c.status)).toEqual(['approved']);

    expect(await renewals.run(due)).toMatchObject({ charged: 1, errors: 0 });
    expect((await chargesOf(second.id)).map((c) => [c.period, c.status])).toEqual([
      [0, 'approved'],
      [1, 'approved'],
    ]);
  });

  it('counts a renewal charge whose outcome is unknown apart from pix; a late charge of a period charged again is voided, and the reconciler goes on', async () => {
    const sub = await subscriptions.subscribe(await plan(), signup);
    const due = new Date(sub.current_period_end);
    chargeThenTimeOut();
    expect(await renewals.run(due)).toMatchObject({ charged: 0, awaitingPix: 0, outcomeUnknown: 1 });
    const [late] = (await chargesOf(sub.id)).filter((c) => c.period === 1);
    const lateTx = await transactionOf(late.id);
    expect(await stored(lateTx)).toMatchObject({ status: 'pending' });
    // As a recovery that ran before this charge's transaction existed (its run's lease lost) left it:
    // given up, so the period is charged again.
    await t.db.query(`UPDATE subscription_charges SET status = 'interrupted' WHERE id = $1`, [late.id]);
    processor.behaviour = async (request) => processor.take(request);
    expect(await renewals.run(due)).toMatchObject({ charged: 1 });
    // Another charge the reconciler has to look at, after the refused one.
    processor.behaviour = async () => {
      throw timeout();
    };
    const other = await transactions.create(sellerId, { amount: '5.00', payment_type: 'credit', card: CARDS.visa });

    await transactions.reconcileInterrupted(0);
    expect(await stored(lateTx)).toMatchObject({ status: 'voided', void_reason: 'period_already_charged' });
    expect(await runVoidJobs(lateTx)).toBe(1);
    expect(processor.charged(lateTx)).toBe(false);
    expect(await stored(other.id)).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });
    const period1 = (await chargesOf(sub.id)).filter((c) => c.period === 1);
    expect(period1.map((c) => [c.status, c.transaction_id === lateTx])).toEqual([
      ['interrupted', true],
      ['approved', false],
    ]);
  });

  it('counts a renewal charge the platform refuses (the seller lost its rate plan) as a failed attempt, never a stuck claim', async () => {
    const other = await payingSeller(t, superuser);
    const planId = await createSubscriptionPlan(t, superuser.access, other.sellerId, { payment_types: ['credit'] });
    const sub = await subscriptions.subscribe(planId, signup);
    const due = new Date(sub.current_period_end);
    await changeBehindTheApp(
      t,
      'UPDATE sellers SET rate_plan_id = NULL WHERE id = $1',
      [other.sellerId],
      `seller:${other.sellerId}`,
    );

    expect(await renewals.run(due)).toMatchObject({ charged: 0, refused: 1, pastDue: 1, errors: 0 });
    const row = async () =>
      (await t.db.query('SELECT status, failed_attempts, next_charge_at FROM subscriptions WHERE id = $1', [sub.id]))
        .rows[0];
    expect(await row()).toMatchObject({
      status: 'past_due',
      failed_attempts: 1,
      next_charge_at: new Date(due.getTime() + 86_400_000),
    });
    expect((await chargesOf(sub.id)).map((c) => [c.period, c.status, c.transaction_id])).toEqual([
      [0, 'approved', sub.transaction],
      [1, 'interrupted', null],
    ]);
    expect((await t.db.query('SELECT 1 FROM transactions WHERE seller_id = $1', [other.sellerId])).rowCount).toBe(1);
    const events = await t.db.query(`SELECT type FROM outbox_events WHERE data->>'id' = $1 ORDER BY seq`, [sub.id]);
    expect(events.rows.map((r: { type: string }) => r.type)).toEqual([
      'subscription.created',
      'subscription.charged',
      'subscription.past_due',
    ]);
    // Run again as of the same time: nothing is due, nothing is claimed.
    expect(await renewals.run(due)).toMatchObject({ charged: 0, refused: 0, errors: 0 });

    // The seller can take payments again: the retry charges the period.
    await changeBehindTheApp(
      t,
      'UPDATE sellers SET rate_plan_id = $2 WHERE id = $1',
      [other.sellerId, other.ratePlanId],
      `seller:${other.sellerId}`,
    );
    expect(await renewals.run(new Date(due.getTime() + 86_400_000))).toMatchObject({ charged: 1, refused: 0 });
    expect(await row()).toMatchObject({ status: 'active', failed_attempts: 0 });
    expect((await chargesOf(sub.id)).map((c) => [c.period, c.status])).toEqual([
      [0, 'approved'],
      [1, 'interrupted'],
      [1, 'approved'],
    ]);
  });

  it('a subscription whose renewals are refused can be canceled at once, and is canceled when its retries are spent', async () => {
    const other = await payingSeller(t, superuser);
    const planId = await createSubscriptionPlan(t, superuser.access, other.sellerId, { payment_types: ['credit'] });
    const [kept, canceledBySeller] = [
      await subscriptions.subscribe(planId, signup),
      await subscriptions.subscribe(planId, signup),
    ];
    const due = new Date(canceledBySeller.current_period_end); // the later of the two
    await changeBehindTheApp(
      t,
      'UPDATE sellers SET rate_plan_id = NULL WHERE id = $1',
      [other.sellerId],
      `seller:${other.sellerId}`,
    );
    expect(await renewals.run(due)).toMatchObject({ refused: 2, pastDue: 2, errors: 0 });

    const cancel = await t.http.post(
      `/subscriptions/subscriber/${canceledBySeller.id}/cancel/`,
      { at_period_end: false },
      { token: superuser.access },
    );
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('canceled');

    const day = 86_400_000;
    for (const [offset, expected] of [
      [1, { refused: 1, canceled: 0 }],
      [3, { refused: 1, canceled: 0 }],
      [5, { refused: 1, canceled: 1 }],
    ] as const) {
      expect(await renewals.run(new Date(due.getTime() + offset * day))).toMatchObject({ ...expected, errors: 0 });
    }
    const final = await t.db.query('SELECT status, failed_attempts FROM subscriptions WHERE id = $1', [kept.id]);
    expect(final.rows[0]).toEqual({ status: 'canceled', failed_attempts: 4 });
    expect((await chargesOf(kept.id)).filter((c) => c.status === 'processing')).toEqual([]);
  });

  describe('a first charge whose outcome is unknown', () => {
    const subscriptionRow = async (id: string) =>
      (await t.db.query('SELECT status FROM subscriptions WHERE id = $1', [id])).rows[0];
    const events = async (id: string) =>
      (await t.db.query(`SELECT type FROM outbox_events WHERE data->>'id' = $1 ORDER BY seq`, [id])).rows.map(
        (r: { type: string }) => r.type,
      );
    const signupUnknown = async () => {
      const answered = await subscriptions.subscribe(await plan(), signup);
      expect(answered).toMatchObject({ status: 'incomplete', transaction: expect.any(String) });
      expect(await stored(answered.transaction!)).toMatchObject({ status: 'pending', source: 'subscription' });
      expect(await chargesOf(answered.id)).toEqual([
        { id: expect.any(String), period: 0, status: 'processing', transaction_id: answered.transaction },
      ]);
      expect(await events(answered.id)).toEqual(['subscription.created']);
      return answered;
    };

    it('writes the subscription incomplete with its charge in flight; the charge found approved activates it', async () => {
      chargeThenTimeOut();
      const answered = await signupUnknown();
      await transactions.reconcileInterrupted(0);
      expect(await stored(answered.transaction!)).toMatchObject({ status: 'approved' });
      expect(await subscriptionRow(answered.id)).toMatchObject({ status: 'active' });
      expect((await chargesOf(answered.id)).map((c) => c.status)).toEqual(['approved']);
      expect(await events(answered.id)).toEqual(['subscription.created', 'subscription.charged']);
      expect(await runVoidJobs(answered.transaction!)).toBe(0);
      expect(processor.charged(answered.transaction!)).toBe(true);
    });

    it('cancels the subscription when the charge was never made, or was declined', async () => {
      processor.behaviour = async () => {
        throw timeout();
      };
      const neverMade = await signupUnknown();
      const declined = await signupUnknown();
      processor.charges.set(declined.transaction!, {
        status: 'declined',
        reference: `fake_${declined.transaction}`,
        declineReason: 'insufficient_funds',
      });
      await transactions.reconcileInterrupted(0);

      expect(await stored(neverMade.transaction!)).toMatchObject({ status: 'voided' });
      expect(await subscriptionRow(neverMade.id)).toMatchObject({ status: 'canceled' });
      expect((await chargesOf(neverMade.id)).map((c) => c.status)).toEqual(['interrupted']);
      expect(await stored(declined.transaction!)).toMatchObject({ status: 'declined' });
      expect(await subscriptionRow(declined.id)).toMatchObject({ status: 'canceled' });
      expect((await chargesOf(declined.id)).map((c) => c.status)).toEqual(['declined']);
      for (const id of [neverMade.id, declined.id]) {
        expect(await events(id)).toEqual(['subscription.created', 'subscription.canceled']);
      }
      expect(processor.charged(neverMade.transaction!)).toBe(false);
    });

    it('voids an approved subscription charge that has no record of its own, at the processor too', async () => {
      chargeThenTimeOut();
      const onFile = await transactions.tokenizeCard(CARDS.visa);
      const orphan = await transactions.create(
        sellerId,
        { amount: '49.90', payment_type: 'credit', reference: randomUUID() },
        'subscription',
        { cardOnFile: onFile },
      );
      expect(orphan.status).toBe('pending');
      await transactions.reconcileInterrupted(0);
      expect(await stored(orphan.id)).toMatchObject({ status: 'voided', void_reason: 'charge_not_recorded' });
      expect(await runVoidJobs(orphan.id)).toBe(1);
      expect(processor.charged(orphan.id)).toBe(false);
    });
  });
});
