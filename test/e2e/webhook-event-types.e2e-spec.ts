import { CheckoutService } from '../../src/events/checkout.service';
import { SubscriptionRenewals } from '../../src/subscriptions/subscription-renewals.service';
import { DepositsService } from '../../src/virtual-accounts/deposits.service';
import { EVENT_TYPES } from '../../src/webhooks/outbox';
import { createApiKey, createUser, TestUser } from '../support/identity';
import { CARDS, PayingSeller, payingSeller } from '../support/payments';
import { createSubscriptionPlan, subscribe } from '../support/subscriptions';
import { startTestApp, TestApp } from '../support/test-app';
import { checkoutBody, publishedEvent } from '../support/ticketed-events';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Every event type reaches a seller's endpoint as openapi.json's `webhooks` describe it: the
 * receiver checks each request against the document (headers and body, no undocumented field).
 * One seller makes every event type happen, through the API and the jobs.
 */
describe('webhook event types', () => {
  let t: TestApp;
  let superuser: TestUser;
  let s: PayingSeller;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({ runWorkers: true, env: { TRUST_PROXY: 'true' } });
    superuser = await createUser(t, { superuser: true });
    s = await payingSeller(t, superuser);
    receiver = await new WebhookReceiver().start();
    const key = (await createApiKey(t, superuser.access, s.sellerId)).key;
    const endpoint = await t.http.post('/integrations/webhooks/', { url: receiver.url, events: ['*'] }, { token: key });
    expect(endpoint.status).toBe(201);
    expect(
      (await t.http.post(`/integrations/webhooks/${endpoint.body.id}/test/`, undefined, { token: key })).status,
    ).toBe(202);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop(); // throws what the requests broke of the document, if anything
  });

  const post = async (path: string, body?: unknown, expected = 201) => {
    const res = await t.http.post(path, body, { token: superuser.access, headers: { 'x-forwarded-for': '10.9.0.1' } });
    if (res.status !== expected) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const publicPost = async (path: string, body: unknown) => {
    const res = await t.http.post(path, body, {
      headers: { 'x-forwarded-for': `10.9.1.${Math.floor(Math.random() * 250)}` },
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  it('delivers each of the types API.md lists, each as the document describes it', async () => {
    // Transactions: created and approved, declined, voided, split rules added and removed.
    const charges = `/unified/accounts/sellers/${s.sellerId}/transactions`;
    const charged = await post(charges, { amount: '100.00', payment_type: 'credit', card: CARDS.visa });
    await post(charges, { amount: '10.00', payment_type: 'credit', card: CARDS.declined }); // 201, declined
    const rule = await post(`${charges}/${charged.id}/split`, {
      recipient: s.master,
      amount: '5.00',
      amount_type: 'fixed',
    });
    const removed = await t.http.delete(`${charges}/${charged.id}/split/${rule.id}`, { token: superuser.access });
    expect(removed.status).toBe(204);
    await post(`${charges}/${charged.id}/void`, undefined, 200);

    // Virtual accounts: a deposit paid, one expired, a payment, transfers (one whose payout fails).
    const accounts = `/uniconta/seller/${s.sellerId}/virtualaccounts`;
    const account = s.master;
    const paid = await post(`${accounts}/${account}/deposit`, { amount: '500.00' });
    await post(`/sandbox/deposits/${paid.id}/confirm`, undefined, 200);
    const unpaid = await post(`${accounts}/${account}/deposit`, { amount: '1.00' });
    await t.app.get(DepositsService).expireDue(new Date(new Date(unpaid.expires_at).getTime() + 1));
    await post(`${accounts}/${account}/pay`, {
      amount: '10.00',
      description: 'Conta de luz',
      payee: { name: 'Energia', document: '11222333000181' },
      barcode: '8'.repeat(44),
    });
    const other = (await post(`/sellers/${s.sellerId}/subaccounts`, { name: 'Other' })).id;
    await post(`${accounts}/${account}/transfer`, { amount: '20.00', destination: { virtual_account: other } });
    await post(`${accounts}/${account}/transfer`, { amount: '30.00', destination: { pix_key: 'fail@sandbox.test' } });

    // Ticketed events: a checkout paid by card, one by pix left to expire.
    const event = await publishedEvent(t.http, superuser.access, s.sellerId);
    const seats = [{ ticket_type: event.ticket_types[0].id, quantity: 1 }];
    await publicPost(`/event/event/${event.id}/checkout/`, checkoutBody(seats, { type: 'credit', card: CARDS.visa }));
    await publicPost(`/event/event/${event.id}/checkout/`, checkoutBody(seats, { type: 'pix' }));
    await t.app.get(CheckoutService).expireDue(new Date(Date.now() + 31 * 60_000));

    // Subscriptions: created and charged, a trial whose card is declined at its end, canceled.
    const plan = await createSubscriptionPlan(t, superuser.access, s.sellerId);
    const member = await subscribe(t, plan);
    const trial = await createSubscriptionPlan(t, superuser.access, s.sellerId, { trial_days: 3 });
    const declined = await subscribe(t, trial, { type: 'credit', card: CARDS.declined });
    await t.app.get(SubscriptionRenewals).run(new Date(new Date(declined.next_charge_at!).getTime() + 1_000));
    await post(`/subscriptions/subscriber/${member.id}/cancel/`, { at_period_end: false }, 200);

    // waitFor also throws what a request broke of the document.
    const missing = () => EVENT_TYPES.filter((type) => !receiver.received.some((r) => r.json.type === type));
    await receiver
      .waitFor(1, () => missing().length === 0, 30_000)
      .catch((error: Error) => {
        throw new Error(`${error.message}; types never delivered: ${missing().join(', ')}`);
      });
  });
});
