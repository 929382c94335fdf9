import { IdempotencyRepository } from '../../src/common/idempotency/idempotency.repository';
import { SubscriptionBilling } from '../../src/subscriptions/subscription-billing.service';
import { SubscriptionRenewals } from '../../src/subscriptions/subscription-renewals.service';
import { createUser, grant, TestUser } from '../support/identity';
import { CARDS, payingSeller } from '../support/payments';
import { newTestService } from '../support/service-test';
import { TestSmtpServer } from '../support/smtp';
import { clientAddress, createSubscriptionPlan, subscribe, SUBSCRIBER } from '../support/subscriptions';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually } from '../support/webhook-receiver';

const DAY = 86_400_000;
const after = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms);

/**
 * Subscriptions over HTTP (API.md 10.2): plans, public subscribe (trial, card, pix), decline,
 * renewals and dunning run by the renewal job as of chosen times, cancellation by seller and by
 * manage token, month-end anchoring, and the welcome e-mail over real SMTP.
 */
describe('subscriptions', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let superuser: TestUser;
  let manager: TestUser;
  let sellerId: string;
  let renew: (now: Date) => ReturnType<SubscriptionRenewals['run']>;

  beforeAll(async () => {
    smtp = new TestSmtpServer();
    await smtp.start();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: 'true' }, runWorkers: true });
    superuser = await createUser(t, { superuser: true });
    sellerId = (await payingSeller(t, superuser)).sellerId;
    manager = await createUser(t);
    await grant(t, superuser, sellerId, manager, ['subscriptions.manage']);
    renew = (now) => t.app.get(SubscriptionRenewals).run(now);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const plan = (overrides: Record<string, unknown> = {}) =>
    createSubscriptionPlan(t, manager.access, sellerId, overrides);
  const subscriber = (id: string) => t.http.get(`/subscriptions/subscriber/${id}/`);
  const subscription = async (id: string) =>
    (await t.db.query('SELECT * FROM subscriptions WHERE id = $1', [id])).rows[0];
  const transactionsOf = async (id: string) =>
    (
      await t.db.query(
        `SELECT t.id, t.status, t.amount::int, t.source, t.payment_type, c.period, c.attempt
         FROM subscription_charges c JOIN transactions t ON t.id = c.transaction_id
         WHERE c.subscription_id = $1 ORDER BY t.seq`,
        [id],
      )
    ).rows;
  const events = async (id: string) =>
    (await t.db.query(`SELECT type FROM outbox_events WHERE data->>'id' = $1 ORDER BY seq`, [id])).rows.map(
      (r) => r.type,
    );
  /** The text of the first mail to `to` matching `pattern` (soft line breaks joined), waiting up to 15 s. */
  const mailTo = async (to: string, pattern: RegExp): Promise<string> => {
    for (let waited = 0; waited < 15_000; waited += 100) {
      const mail = smtp.received.find((m) => m.to.includes(to) && pattern.test(m.raw));
      if (mail) return mail.raw;
      await new Promise((r) => setTimeout(r, 100));
    }
    const rows = await t.db.query('SELECT recipient, subject, status, last_error FROM mail_outbox');
    throw new Error(`no mail to ${to} matching ${pattern}: ${JSON.stringify(rows.rows)}`);
  };
  const confirmPix = (transactionId: string) =>
    t.http.post(`/sandbox/transactions/${transactionId}/confirm/`, undefined, { token: superuser.access });

  describe('plans', () => {
    it('creates a plan, shows it publicly while active, and keeps price and interval fixed', async () => {
      const id = await plan({ amount: '19.90', interval: 'week', interval_count: 2, trial_days: 3 });
      const list = await t.http.get(`/subscriptions/plan/?seller=${sellerId}`, { token: manager.access });
      expect(list.status).toBe(200);
      expect(list.body.results[0]).toMatchObject({
        id,
        seller: sellerId,
        amount: '19.90',
        interval: 'week',
        interval_count: 2,
        trial_days: 3,
        payment_types: ['credit', 'pix'],
        active: true,
      });

      const page = await t.http.get(`/subscriptions/plan/${id}/`);
      expect(page.status).toBe(200);
      expect(page.body).toEqual({
        id,
        name: 'Clube do Café',
        description: 'Um pacote por mês',
        amount: '19.90',
        interval: 'week',
        interval_count: 2,
        trial_days: 3,
        seller: { name: 'Loja Teste' },
        payment_types: ['credit', 'pix'],
      });

      const fixed = await t.http.patch(
        `/subscriptions/plan/${id}/`,
        { amount: '9.90', interval: 'day', seller: sellerId },
        {
          token: manager.access,
        },
      );
      expect(fixed.status).toBe(400);
      expect(fixed.body.errors.amount[0]).toMatch(/cannot be changed.*create a new plan/);
      expect(fixed.body.errors.interval).toBeDefined();
      expect(fixed.body.errors.seller).toEqual(['cannot be changed: a plan belongs to its seller for good']);

      const renamed = await t.http.patch(
        `/subscriptions/plan/${id}/`,
        { name: 'Clube Duplo', active: false },
        {
          token: manager.access,
        },
      );
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'Clube Duplo', active: false, amount: '19.90' });
      expect(renamed.body.updated_at).toEqual(expect.any(String));
      // A PATCH that changes nothing (empty, or the values it has) leaves updated_at.
      for (const body of [{}, { name: 'Clube Duplo', active: false }]) {
        const same = await t.http.patch(`/subscriptions/plan/${id}/`, body, { token: manager.access });
        expect([same.status, same.body.updated_at]).toEqual([200, renamed.body.updated_at]);
      }
      // The name is the subject of the subscriber's e-mails: one line only.
      const twoLines = await t.http.patch(
        `/subscriptions/plan/${id}/`,
        { name: 'Clube\r\nBcc: x@example.com' },
        { token: manager.access },
      );
      expect(twoLines.status).toBe(400);
      expect(twoLines.body.errors).toEqual({ name: ['must be one line of text, without control characters'] });
      expect((await t.http.get(`/subscriptions/plan/${id}/`)).status).toBe(404);
    });

    it('refuses a plan without a seller it can see, bad amounts and unknown payment types', async () => {
      const bad = await t.http.post(
        '/subscriptions/plan/',
        { seller: sellerId, name: 'X', amount: '10.001', interval: 'fortnight', payment_types: ['boleto'] },
        { token: manager.access },
      );
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.errors).sort()).toEqual(['amount', 'interval', 'payment_types']);
      const tab = await t.http.post(
        '/subscriptions/plan/',
        { seller: sellerId, name: 'Clube\tDuplo', amount: '10.00', interval: 'month', payment_types: ['credit'] },
        { token: manager.access },
      );
      expect(tab.status).toBe(400);
      expect(tab.body.errors).toEqual({ name: ['must be one line of text, without control characters'] });
      const notList = await t.http.post(
        '/subscriptions/plan/',
        { seller: sellerId, name: 'X', amount: '10.00', interval: 'month', payment_types: 'credit' },
        { token: manager.access },
      );
      expect(notList.status).toBe(400);
      expect(notList.body.message).toBe('Invalid request: payment_types must be an array.');
      const list = await t.http.get('/subscriptions/plan/', { token: manager.access });
      expect(list.status).toBe(400);
      expect(list.body.errors).toEqual({ seller: ['is required'] });
    });
  });

  describe('subscribe', () => {
    it('trial: nothing charged, card kept only as a token; charged when the trial ends', async () => {
      const id = await plan({ trial_days: 7 });
      const since = smtp.received.length;
      const sub = await subscribe(t, id);
      expect(sub).toMatchObject({ status: 'trialing', transaction: null, card: { brand: 'Visa', last4: '1111' } });
      expect(sub.manage_token).toMatch(/^smt_[A-Za-z0-9_-]{43}$/);
      expect(new Date(sub.next_charge_at!).getTime() - Date.now()).toBeGreaterThan(7 * DAY - 60_000);
      expect(await transactionsOf(sub.id)).toEqual([]);

      // Only the processor's token, brand, last 4 and expiry are stored; never the number or CVV.
      const row = await subscription(sub.id);
      expect(row.card_token).toMatch(/^tok_sbx_/);
      expect(row.manage_token_hash).not.toContain(sub.manage_token);
      const vault = await t.db.query('SELECT to_jsonb(v)::text AS row FROM sandbox_card_tokens v WHERE token = $1', [
        row.card_token,
      ]);
      expect(vault.rows[0].row).toContain('"last4": "1111"');
      for (const text of [JSON.stringify(row), vault.rows[0].row]) {
        expect(text).not.toContain(CARDS.visa.number);
        expect(text).not.toContain(`"${CARDS.visa.cvv}"`);
      }

      const mail = await smtp.waitForMail(SUBSCRIBER.email, since);
      expect(mail.raw.replace(/=\r?\n/g, '')).toContain(sub.manage_token);

      const summary = await renew(after(sub.next_charge_at!, 60_000));
      expect(summary.charged).toBeGreaterThanOrEqual(1);
      const [charge] = await transactionsOf(sub.id);
      expect(charge).toMatchObject({ status: 'approved', amount: 4990, source: 'subscription', period: 0 });
      const view = (await subscriber(sub.id)).body;
      expect(view).toMatchObject({
        status: 'active',
        email: 'j***@example.com',
        card: { brand: 'Visa', last4: '1111' },
      });
      const renewed = await subscription(sub.id);
      expect(renewed.current_period_start.toISOString()).toBe(sub.next_charge_at);
      expect(renewed.current_period_end.toISOString()).toBe(view.next_charge_at);
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.charged']);
    });

    it("no trial: charges the card at once, through the seller's rate and split plans", async () => {
      const id = await plan();
      const sub = await subscribe(t, id, { type: 'credit', card: CARDS.mastercard });
      expect(sub.status).toBe('active');
      const tx = await t.http.get(`/unified/accounts/sellers/${sellerId}/transactions/${sub.transaction}/`, {
        token: superuser.access,
      });
      expect(tx.body).toMatchObject({
        status: 'approved',
        amount: '49.90',
        source: 'subscription',
        payment_type: 'credit',
        card_brand: 'MasterCard',
        card_last4: '4444',
        customer: { name: SUBSCRIBER.name, email: SUBSCRIBER.email, document: '52998224725' },
      });
      expect(tx.body.split.shares.length).toBeGreaterThan(0);
      expect(sub.current_period_end).toBe(sub.next_charge_at);
      const view = (await subscriber(sub.id)).body;
      expect(view.charges).toEqual([
        expect.objectContaining({ transaction: sub.transaction, amount: '49.90', status: 'approved' }),
      ]);
      expect(view.email).toBe('j***@example.com');
      expect(view).not.toHaveProperty('document');
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.charged']);
    });

    it('pix: incomplete with the pix to pay, active once paid', async () => {
      const id = await plan({ payment_types: ['pix'] });
      const sub = await subscribe(t, id, { type: 'pix' });
      expect(sub.status).toBe('incomplete');
      expect(sub.pix?.qr_code).toMatch(/^000201/);
      // The code can be paid for as long as the subscription waits for it (a day), not the processor's default.
      expect(Date.parse(sub.pix!.expires_at)).toBe(Date.parse(sub.next_charge_at!));
      // The public page shows the pix to pay while it waits (a page whose subscribe answer was lost).
      expect((await subscriber(sub.id)).body).toMatchObject({ status: 'incomplete', pix: sub.pix });
      expect((await confirmPix(sub.transaction!)).status).toBe(200);
      const view = (await subscriber(sub.id)).body;
      expect(view.status).toBe('active');
      expect(view.pix).toBeNull();
      expect(view.charges[0]).toMatchObject({ status: 'approved' });
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.charged']);
    });

    it('pix never paid: the incomplete subscription is canceled at its due date and the pix withdrawn', async () => {
      const id = await plan({ payment_types: ['pix'] });
      const sub = await subscribe(t, id, { type: 'pix' });
      await renew(after(sub.next_charge_at!, 1000));
      expect((await subscriber(sub.id)).body.status).toBe('canceled');
      expect((await transactionsOf(sub.id))[0].status).toBe('voided');
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.canceled']);
    });

    it('declined first charge: 402 card_declined and no subscription', async () => {
      const id = await plan();
      const res = await t.http.post(
        `/subscriptions/plan/${id}/subscribe/`,
        { subscriber: SUBSCRIBER, payment: { type: 'credit', card: CARDS.declined } },
        { headers: { 'x-forwarded-for': clientAddress() } },
      );
      expect(res.status).toBe(402);
      expect(res.body).toMatchObject({ statusCode: 402, code: 'card_declined' });
      const count = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1', [id]);
      expect(count.rows[0].n).toBe(0);
      // The declined charge is recorded, naming the plan (there is no subscription to name).
      const charge = await t.db.query(
        `SELECT status, description FROM transactions WHERE source = 'subscription' AND description LIKE $1`,
        [`%${id}%`],
      );
      expect(charge.rows).toEqual([
        { status: 'declined', description: `Subscription to plan ${id}: Clube do Café, period 1` },
      ]);
    });

    it('bad input: 404 for unknown or inactive plans, 400 with the field for the rest, nothing created', async () => {
      const id = await plan({ payment_types: ['credit'] });
      const inactive = await plan({ active: false });
      const post = (planId: string, body: unknown) =>
        t.http.post(`/subscriptions/plan/${planId}/subscribe/`, body, {
          headers: { 'x-forwarded-for': clientAddress() },
        });
      const ok = { subscriber: SUBSCRIBER, payment: { type: 'credit', card: CARDS.visa } };
      expect((await post('0b6c5bd4-3c5e-4d0e-9a53-1d6c3f0f0f0f', ok)).status).toBe(404);
      expect((await post(inactive, ok)).body.code).toBe('subscription_plan_not_found');

      const noCard = await post(id, { subscriber: SUBSCRIBER, payment: { type: 'credit' } });
      expect(noCard.status).toBe(400);
      expect(noCard.body.errors).toEqual({ 'payment.card': ['is required for credit'] });
      const pix = await post(id, { subscriber: SUBSCRIBER, payment: { type: 'pix' } });
      expect(pix.status).toBe(400);
      expect(pix.body.code).toBe('payment_type_not_offered');
      expect(pix.body.errors).toBeUndefined(); // validation failures only carry `errors`
      const document = await post(id, { ...ok, subscriber: { ...SUBSCRIBER, document: '111.111.111-11' } });
      expect(document.status).toBe(400);
      expect(document.body.errors).toEqual({ 'subscriber.document': ['must be a valid CPF or CNPJ'] });
      const email = await post(id, { ...ok, subscriber: { ...SUBSCRIBER, email: 'joana' } });
      expect(email.status).toBe(400);
      expect(Object.keys(email.body.errors)).toEqual(['subscriber.email']);
      const card = await post(id, {
        ...ok,
        payment: { type: 'credit', card: { ...CARDS.visa, number: '4111111111111112' } },
      });
      expect(card.status).toBe(400);
      expect(card.body.errors).toEqual({ 'payment.card.number': ['is not a valid card number'] });

      const count = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1', [id]);
      expect(count.rows[0].n).toBe(0);
    });

    it('a trial signup whose ending charge the seller could not take is refused at once, as without a trial', async () => {
      for (const trial_days of [0, 3]) {
        // A price below the card's fixed fee: no charge of it can be taken.
        const id = await plan({ amount: '0.01', trial_days });
        const res = await t.http.post(
          `/subscriptions/plan/${id}/subscribe/`,
          { subscriber: SUBSCRIBER, payment: { type: 'credit', card: CARDS.visa } },
          { headers: { 'x-forwarded-for': clientAddress() } },
        );
        expect({ trial_days, status: res.status, code: res.body.code }).toEqual({
          trial_days,
          status: 400,
          code: 'negative_seller_net',
        });
        const count = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1', [id]);
        expect(count.rows[0].n).toBe(0);
      }
    });

    it('honours Idempotency-Key without replaying the manage token: a repeat is 409 with the id, not charged twice', async () => {
      const id = await plan();
      const key = `sub-${id}`;
      const headers = { 'idempotency-key': key, 'x-forwarded-for': '10.200.0.1' };
      const body = { subscriber: SUBSCRIBER, payment: { type: 'credit', card: CARDS.visa } };
      const first = await t.http.post(`/subscriptions/plan/${id}/subscribe/`, body, { headers });
      const again = await t.http.post(`/subscriptions/plan/${id}/subscribe/`, body, { headers });
      expect(first.status).toBe(201);
      expect(first.body.manage_token).toMatch(/^smt_/);
      expect(again.status).toBe(409);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toMatchObject({ code: 'idempotency_secret_not_replayable', id: first.body.id });
      expect(again.text).not.toContain(first.body.manage_token);
      // The key keeps only the subscription's id: the token is nowhere in the idempotency store.
      const stored = await t.db.query('SELECT * FROM idempotency_keys WHERE key = $1', [key]);
      expect(stored.rows).toHaveLength(1);
      expect(stored.rows[0].response_body).toEqual({ id: first.body.id });
      expect(JSON.stringify(stored.rows[0])).not.toContain(first.body.manage_token);
      const count = await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1', [id]);
      expect(count.rows[0].n).toBe(1);
      expect(await transactionsOf(first.body.id)).toHaveLength(1);
    });
  });

  describe('Idempotency-Key', () => {
    const dropped = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });

    it('a signup whose answer could not be stored resumes its charge on retry: one charge, one subscription', async () => {
      const id = await plan({ payment_types: ['credit'] });
      const subscriber = { ...SUBSCRIBER, email: 'signup-once@example.com' };
      const from = clientAddress();
      const post = () =>
        t.http.post(
          `/subscriptions/plan/${id}/subscribe/`,
          { subscriber, payment: { type: 'credit', card: CARDS.visa } },
          { headers: { 'x-forwarded-for': from, 'idempotency-key': 'signup-once' } },
        );
      // The database drops while the answer is stored: the signup's charge was made, its settlement is not.
      jest.spyOn(t.app.get(IdempotencyRepository), 'complete').mockRejectedValueOnce(dropped());
      const failed = await post();
      expect(failed.status).toBe(503);

      const retried = await post();
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      expect(retried.body).toMatchObject({ status: 'active', manage_token: expect.any(String) });
      const subscriptions = await t.db.query('SELECT id FROM subscriptions WHERE plan_id = $1', [id]);
      expect(subscriptions.rows).toEqual([{ id: retried.body.id }]);
      // What the processor charged for this signup, and what the books hold: one approved charge.
      const charged = await t.db.query(
        `SELECT t.id, t.status, c.status AS at_processor FROM transactions t
         JOIN sandbox_charges c ON c.transaction_id = t.id WHERE t.customer->>'email' = $1`,
        [subscriber.email],
      );
      expect(charged.rows).toEqual([{ id: retried.body.transaction, status: 'approved', at_processor: 'approved' }]);
      expect(await transactionsOf(retried.body.id)).toHaveLength(1);

      const again = await post();
      expect(again.status).toBe(409);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toMatchObject({ code: 'idempotency_secret_not_replayable', id: retried.body.id });
    });

    it('a trial signup and a plan record their answers with the change', async () => {
      const repo = t.app.get(IdempotencyRepository);
      const id = await plan({ trial_days: 7 });
      const from = clientAddress();
      const post = () =>
        t.http.post(
          `/subscriptions/plan/${id}/subscribe/`,
          { subscriber: SUBSCRIBER, payment: { type: 'credit', card: CARDS.visa } },
          { headers: { 'x-forwarded-for': from, 'idempotency-key': 'trial-once' } },
        );
      const count = async () =>
        (await t.db.query('SELECT count(*)::int AS n FROM subscriptions WHERE plan_id = $1', [id])).rows[0].n;
      // The answer is stored in the subscription's transaction: when that fails, nothing was created.
      jest.spyOn(repo, 'complete').mockRejectedValueOnce(dropped());
      expect((await post()).status).toBe(503);
      expect(await count()).toBe(0);
      const created = await post();
      expect(created.status).toBe(201);
      const again = await post();
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: 'idempotency_secret_not_replayable', id: created.body.id });
      expect(await count()).toBe(1);
      jest.restoreAllMocks();

      const newPlan = () =>
        t.http.post(
          '/subscriptions/plan/',
          { seller: sellerId, name: 'Once', amount: '10.00', interval: 'month', payment_types: ['credit'] },
          { token: manager.access, headers: { 'idempotency-key': 'plan-once' } },
        );
      const calls: boolean[] = [];
      const complete = repo.complete.bind(repo);
      jest.spyOn(repo, 'complete').mockImplementation(async (ref, answer, manager) => {
        calls.push(manager !== undefined);
        return complete(ref, answer, manager);
      });
      const first = await newPlan();
      expect(first.status).toBe(201);
      expect(calls).toEqual([true]); // in the plan's own transaction
      expect((await newPlan()).body).toEqual(first.body);
      jest.restoreAllMocks();
    });
  });

  describe('renewals and dunning', () => {
    it('renews at the period end: charged, period advanced', async () => {
      const id = await plan();
      const sub = await subscribe(t, id);
      expect(await renew(new Date(sub.next_charge_at!))).toMatchObject({ errors: 0 });
      const txs = await transactionsOf(sub.id);
      expect(txs.map((x) => [x.status, x.period])).toEqual([
        ['approved', 0],
        ['approved', 1],
      ]);
      const view = (await subscriber(sub.id)).body;
      expect(view.status).toBe('active');
      expect(new Date(view.current_period_end).getTime()).toBeGreaterThan(new Date(sub.next_charge_at!).getTime());
      // Running again as of the same time charges nothing more.
      await renew(new Date(sub.next_charge_at!));
      expect(await transactionsOf(sub.id)).toHaveLength(2);
    });

    it('failure → past_due, retried after 1 and 3 days → recovered to active', async () => {
      const id = await plan({ trial_days: 1 });
      const sub = await subscribe(t, id, { type: 'credit', card: CARDS.declined });
      const due = sub.next_charge_at!;
      await renew(new Date(due));
      let row = await subscription(sub.id);
      expect(row.status).toBe('past_due');
      expect(row.next_charge_at.toISOString()).toBe(after(due, DAY).toISOString());
      await renew(after(due, DAY));
      row = await subscription(sub.id);
      expect(row.next_charge_at.toISOString()).toBe(after(due, 3 * DAY).toISOString());
      // The customer's bank now approves the card (the sandbox processor's state).
      await t.db.query('UPDATE sandbox_card_tokens SET outcome = NULL WHERE token = $1', [row.card_token]);
      await renew(after(due, 3 * DAY));
      const txs = await transactionsOf(sub.id);
      expect(txs.map((x) => [x.status, x.period, x.attempt])).toEqual([
        ['declined', 0, 0],
        ['declined', 0, 1],
        ['approved', 0, 2],
      ]);
      const view = (await subscriber(sub.id)).body;
      expect(view.status).toBe('active');
      expect(view.current_period_end).toBe(view.next_charge_at);
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.past_due', 'subscription.charged']);
    });

    it('failure → past_due → canceled after the retries of days 1, 3 and 5', async () => {
      const id = await plan({ trial_days: 2 });
      const sub = await subscribe(t, id, { type: 'credit', card: CARDS.declined });
      const due = sub.next_charge_at!;
      for (const days of [0, 1, 3]) {
        // The run's summary counts the subscription going past due once, on its first decline.
        expect(await renew(after(due, days * DAY))).toMatchObject({
          declined: 1,
          pastDue: days === 0 ? 1 : 0,
          canceled: 0,
        });
        expect((await subscription(sub.id)).status).toBe('past_due');
      }
      expect(await renew(after(due, 5 * DAY))).toMatchObject({ declined: 1, pastDue: 0, canceled: 1 });
      const row = await subscription(sub.id);
      expect(row).toMatchObject({ status: 'canceled', next_charge_at: null });
      expect(row.canceled_at.toISOString()).toBe(after(due, 5 * DAY).toISOString());
      expect((await transactionsOf(sub.id)).map((x) => x.status)).toEqual([
        'declined',
        'declined',
        'declined',
        'declined',
      ]);
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.past_due', 'subscription.canceled']);
      await renew(after(due, 30 * DAY));
      expect(await transactionsOf(sub.id)).toHaveLength(4);
    });

    it('pix renewal: pix charge e-mailed, past_due when unpaid by its due date, active once paid', async () => {
      const id = await plan({ payment_types: ['pix'] });
      const sub = await subscribe(t, id, { type: 'pix' }, { ...SUBSCRIBER, email: 'pix@example.com' });
      await confirmPix(sub.transaction!);
      const due = (await subscriber(sub.id)).body.next_charge_at;
      expect(await renew(new Date(due))).toMatchObject({ awaitingPix: 1 });
      const renewal = (await transactionsOf(sub.id))[1];
      expect(renewal).toMatchObject({ status: 'pending', payment_type: 'pix', period: 1 });
      const mail = await mailTo('pix@example.com', /Subject: .*Payment.due/);
      const pix = (
        await t.http.get(`/unified/accounts/sellers/${sellerId}/transactions/${renewal.id}/`, {
          token: superuser.access,
        })
      ).body.pix;
      expect(mail.replace(/=\r?\n/g, '')).toContain(pix.qr_code);
      // Payable until the subscription gives up on it: past due after a day, canceled after five.
      expect(Date.parse(pix.expires_at)).toBe(Date.parse(due) + 5 * DAY);
      expect((await subscription(sub.id)).status).toBe('active');

      await renew(after(due, DAY));
      expect((await subscription(sub.id)).status).toBe('past_due');
      expect((await subscriber(sub.id)).body.pix).toEqual(pix);
      expect((await confirmPix(renewal.id)).status).toBe(200);
      const view = (await subscriber(sub.id)).body;
      expect(view.status).toBe('active');
      expect(new Date(view.current_period_end).getTime()).toBeGreaterThan(new Date(due).getTime());
      expect(await events(sub.id)).toEqual([
        'subscription.created',
        'subscription.charged',
        'subscription.past_due',
        'subscription.charged',
      ]);
    });

    it('a trial ending with a pix charge: active while its pix awaits payment, past_due when unpaid by its due date', async () => {
      const id = await plan({ trial_days: 7, payment_types: ['pix'] });
      const sub = await subscribe(t, id, { type: 'pix' });
      expect(sub).toMatchObject({ status: 'trialing', transaction: null });
      expect(await renew(after(sub.next_charge_at!, 60_000))).toMatchObject({ awaitingPix: 1 });
      const [charge] = await transactionsOf(sub.id);
      expect(charge).toMatchObject({ status: 'pending', payment_type: 'pix', period: 0 });
      expect((await subscriber(sub.id)).body.status).toBe('active');
      await renew(after(sub.next_charge_at!, DAY + 60_000));
      expect((await subscription(sub.id)).status).toBe('past_due');
    });

    it('month-end anchoring: a plan anchored on 31 January renews on 28 February, then 31 March', async () => {
      const id = await plan();
      const sub = await subscribe(t, id);
      // As if it had started on 31 January 2027 (the anchor is set by the first charge's time).
      await t.db.query(
        `UPDATE subscriptions SET anchor_at = '2027-01-31T12:00:00Z', current_period_start = '2027-01-31T12:00:00Z',
           current_period_end = '2027-02-28T12:00:00Z', next_charge_at = '2027-02-28T12:00:00Z' WHERE id = $1`,
        [sub.id],
      );
      await t.db.query(
        `UPDATE subscription_charges SET period_start = '2027-01-31T12:00:00Z', period_end = '2027-02-28T12:00:00Z',
           due_at = '2027-01-31T12:00:00Z' WHERE subscription_id = $1`,
        [sub.id],
      );
      await renew(new Date('2027-02-28T12:00:00Z'));
      let view = (await subscriber(sub.id)).body;
      expect(view.next_charge_at).toBe('2027-03-31T12:00:00.000Z');
      await renew(new Date('2027-03-31T12:00:00Z'));
      view = (await subscriber(sub.id)).body;
      expect(view.next_charge_at).toBe('2027-04-30T12:00:00.000Z');
      expect(view.charges.map((c: { period_start: string }) => c.period_start)).toEqual([
        '2027-01-31T12:00:00.000Z',
        '2027-02-28T12:00:00.000Z',
        '2027-03-31T12:00:00.000Z',
      ]);
    });
  });

  describe('cancel', () => {
    const cancel = (id: string, token: string | undefined, body?: unknown) =>
      t.http.post(`/subscriptions/subscriber/${id}/cancel/`, body, {
        token,
        headers: { 'x-forwarded-for': clientAddress() },
      });

    it('seller cancels now: canceled at once, event; a second cancel is 409', async () => {
      const sub = await subscribe(t, await plan());
      const res = await cancel(sub.id, manager.access, { at_period_end: false });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: sub.id, status: 'canceled', next_charge_at: null, seller: sellerId });
      expect((await cancel(sub.id, manager.access, { at_period_end: false })).body.code).toBe(
        'subscription_already_canceled',
      );
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.charged', 'subscription.canceled']);
      await renew(after(sub.next_charge_at!, DAY));
      expect(await transactionsOf(sub.id)).toHaveLength(1);
    });

    it('a cancellation withdraws an open pix in its own database transaction: no payment is taken once it is canceled', async () => {
      const pixPlan = await plan({ payment_types: ['pix'] });
      const sub = await subscribe(t, pixPlan, { type: 'pix' });
      expect((await cancel(sub.id, manager.access, { at_period_end: false })).body.status).toBe('canceled');
      const { rows } = await t.db.query('SELECT status, void_reason FROM transactions WHERE id = $1', [
        sub.transaction,
      ]);
      expect(rows).toEqual([{ status: 'voided', void_reason: 'subscription_canceled' }]);
      // Written by one database transaction: its events carry the time it began.
      const written = await t.db.query(
        `SELECT DISTINCT created_at FROM outbox_events
          WHERE (type = 'subscription.canceled' AND data->>'id' = $1) OR (type = 'transaction.voided' AND data->>'id' = $2)`,
        [sub.id, sub.transaction],
      );
      expect(written.rows).toHaveLength(1);
      expect((await confirmPix(sub.transaction!)).status).toBe(409); // no longer payable
    });

    it('a cancellation "at period end" once the period is over and its renewal pix unpaid: canceled now, the pix withdrawn', async () => {
      const pixPlan = await plan({ payment_types: ['pix'] });
      const sub = await subscribe(t, pixPlan, { type: 'pix' });
      await confirmPix(sub.transaction!);
      // As if the paid period (a month) had ended an hour ago.
      const start = `now() - interval '1 month 1 hour'`;
      const end = `now() - interval '1 hour'`;
      await t.db.query(
        `UPDATE subscriptions SET anchor_at = ${start}, current_period_start = ${start}, current_period_end = ${end},
           next_charge_at = ${end} WHERE id = $1`,
        [sub.id],
      );
      await t.db.query(
        `UPDATE subscription_charges SET period_start = ${start}, period_end = ${end}, due_at = ${start}
          WHERE subscription_id = $1`,
        [sub.id],
      );
      expect(await renew(new Date())).toMatchObject({ awaitingPix: 1 });
      const renewal = (await transactionsOf(sub.id))[1];
      expect((await subscriber(sub.id)).body.status).toBe('active');

      const canceled = await cancel(sub.id, sub.manage_token);
      expect(canceled.status).toBe(200);
      expect(canceled.body.status).toBe('canceled');
      expect((await confirmPix(renewal.id)).status).toBe(409);
      expect((await transactionsOf(sub.id)).map((c: { status: string }) => c.status)).toEqual(['approved', 'voided']);
    });

    it('a cancellation and a payment at the same moment: paid before it, or voided and refused, never paid after', async () => {
      const pixPlan = await plan({ payment_types: ['pix'] });
      const subs = await Promise.all(Array.from({ length: 6 }, () => subscribe(t, pixPlan, { type: 'pix' })));
      const outcomes = await Promise.all(
        subs.map(async (sub) => {
          const [canceled, paid] = await Promise.all([
            cancel(sub.id, manager.access, { at_period_end: false }),
            confirmPix(sub.transaction!),
          ]);
          expect(canceled.status).toBe(200);
          const { rows } = await t.db.query('SELECT status FROM transactions WHERE id = $1', [sub.transaction]);
          // The subscription's own events tell the order: a payment settled first made it active.
          return { paid: paid.status, charge: rows[0].status, events: await events(sub.id) };
        }),
      );
      for (const outcome of outcomes) {
        expect([
          {
            paid: 200,
            charge: 'approved',
            events: ['subscription.created', 'subscription.charged', 'subscription.canceled'],
          },
          { paid: 409, charge: 'voided', events: ['subscription.created', 'subscription.canceled'] },
        ]).toContainEqual(outcome);
      }
    });

    it('an open pix is withdrawn by the renewal run that cancels its subscription, even when the process dies right after', async () => {
      // The process dies between the run's commit and the withdrawal it then does at once.
      const billing = t.app.get(SubscriptionBilling);
      const dying = Object.assign(Object.create(billing) as SubscriptionBilling, {
        withdrawNow: async () => undefined,
      });
      const pixPlan = await plan({ payment_types: ['pix'] });
      // Canceled by the renewal run (never paid by its due date): the withdrawal was queued with
      // the cancellation, and a worker does it.
      const byRun = await subscribe(t, pixPlan, { type: 'pix' });
      const renewals = newTestService(t, SubscriptionRenewals, [[SubscriptionBilling, dying]]);
      await renewals.run(after(byRun.next_charge_at!, 1000));
      expect((await subscriber(byRun.id)).body.status).toBe('canceled');
      const withdrawn = await eventually(async () => {
        const { rows } = await t.db.query('SELECT status, void_reason FROM transactions WHERE id = $1', [
          byRun.transaction,
        ]);
        return rows[0].status === 'voided' && rows[0];
      });
      expect(withdrawn).toEqual({ status: 'voided', void_reason: 'subscription_canceled' });
    });

    it("the public limit (30 a minute per address) counts the subscribers' cancels, not the seller's", async () => {
      const sub = await subscribe(t, await plan());
      const from = { 'x-forwarded-for': '192.0.2.131' };
      const post = (token: string) =>
        t.http.post(`/subscriptions/subscriber/${sub.id}/cancel/`, { at_period_end: true }, { token, headers: from });
      const subscriber = [];
      for (let i = 0; i < 31; i++) subscriber.push((await post(sub.manage_token)).status);
      expect(subscriber[0]).toBe(200);
      expect(subscriber.slice(1, 30).every((s) => s === 409)).toBe(true);
      expect(subscriber[30]).toBe(429);
      // The seller's backend, from the same address: its own credential, not the public limit.
      const seller = [];
      for (let i = 0; i < 3; i++) seller.push((await post(manager.access)).status);
      expect(seller).toEqual([409, 409, 409]);
    });

    it('the public limit counts cancels with a wrong manage token: guessing tokens is throttled', async () => {
      const sub = await subscribe(t, await plan());
      const from = { 'x-forwarded-for': '192.0.2.132' };
      const wrong = `smt_${'A'.repeat(43)}`;
      const statuses = [];
      for (let i = 0; i < 31; i++) {
        statuses.push(
          (
            await t.http.post(
              `/subscriptions/subscriber/${sub.id}/cancel/`,
              { at_period_end: true },
              {
                token: wrong,
                headers: from,
              },
            )
          ).status,
        );
      }
      expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
      expect(statuses[30]).toBe(429);
      // Past the limit, the right token from that address waits too; the subscription is untouched.
      const right = await t.http.post(
        `/subscriptions/subscriber/${sub.id}/cancel/`,
        { at_period_end: true },
        {
          token: sub.manage_token,
          headers: from,
        },
      );
      expect(right.status).toBe(429);
      expect((await t.http.get(`/subscriptions/subscriber/${sub.id}/`)).body.cancel_at_period_end).toBe(false);
    });

    it('subscriber cancels with the manage token: at period end, then canceled with no further charge', async () => {
      const sub = await subscribe(t, await plan());
      const res = await cancel(sub.id, sub.manage_token);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'active', cancel_at_period_end: true, email: 'j***@example.com' });
      const twice = await cancel(sub.id, sub.manage_token);
      expect(twice.status).toBe(409);
      expect(twice.body.code).toBe('subscription_already_canceled');
      expect((await cancel(sub.id, sub.manage_token, { at_period_end: false })).status).toBe(403);

      await renew(new Date(sub.next_charge_at!));
      expect((await subscription(sub.id)).status).toBe('canceled');
      expect(await transactionsOf(sub.id)).toHaveLength(1);
      expect(await events(sub.id)).toEqual(['subscription.created', 'subscription.charged', 'subscription.canceled']);
    });

    it('a wrong or missing manage token is 401 and changes nothing', async () => {
      const sub = await subscribe(t, await plan());
      const other = await subscribe(t, await plan());
      const before = await subscription(sub.id);
      for (const token of [undefined, other.manage_token, `smt_${'A'.repeat(43)}`, 'smt_short', 'garbage']) {
        // Asking for what a subscriber may not do (cancel now) changes nothing: the token is checked first.
        for (const body of [undefined, { at_period_end: false }]) {
          const res = await cancel(sub.id, token, body);
          expect(res.status).toBe(401);
          expect(res.headers.get('www-authenticate')).toBe('Bearer');
          // A token of no shape the route takes is refused as a wrong manage token is.
          expect(res.body.code).toBe(token === undefined ? 'not_authenticated' : 'invalid_manage_token');
        }
      }
      expect(await subscription(sub.id)).toEqual(before);
    });
  });
});
