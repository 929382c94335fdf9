import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/delivery-policy';
import { WebhookWorker } from '../../src/webhooks/webhook-worker';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { createApiKey, createSeller, createUser, TestUser } from '../support/identity';
import { CARDS, payingSeller } from '../support/payments';
import { TestSmtpServer } from '../support/smtp';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, ReceivedWebhook, Reply, WebhookReceiver } from '../support/webhook-receiver';

const SCALE = 0.00001; // 5 s → 0.05 ms … 24 h → 864 ms; 5 days → 4.32 s
const base = '/integrations/webhooks';

/** Webhook delivery by the in-process worker to real local receivers (API.md section 5). */
describe('webhook delivery', () => {
  let t: TestApp;
  let superuser: TestUser;
  const smtp = new TestSmtpServer();
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    await smtp.start();
    t = await startTestApp({
      runWorkers: true,
      env: {
        WEBHOOKS_RETRY_SCALE: String(SCALE),
        WEBHOOKS_TIMEOUT_SECONDS: '2',
        WEBHOOKS_ENDPOINT_CONCURRENCY: '2',
        SMTP_URL: smtp.url,
      },
    });
    superuser = await createUser(t, { superuser: true });
  });
  afterAll(async () => {
    await t.close();
    await Promise.all(receivers.map((r) => r.stop()));
    await smtp.stop();
  });

  const receiver = async (reply?: (r: ReceivedWebhook, i: number) => Reply) => {
    const r = await new WebhookReceiver(reply).start();
    receivers.push(r);
    return r;
  };

  /** A seller of its own with an API key and one endpoint at `url`. */
  const endpointFor = async (url: string, events: string[] = ['*'], sellerId?: string) => {
    const seller = sellerId ?? (await createSeller(t, superuser));
    const key = (await createApiKey(t, superuser.access, seller)).key;
    const res = await t.http.post(`${base}/`, { url, events }, { token: key });
    if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
    return { seller, key, id: res.body.id as string, secret: res.body.secret as string };
  };
  const sendTest = async (e: { id: string; key: string }) => {
    const res = await t.http.post(`${base}/${e.id}/test/`, undefined, { token: e.key });
    expect(res.status).toBe(202);
    return res.body as { id: string; event: { id: string } };
  };
  const delivery = async (e: { id: string; key: string }, deliveryId: string) => {
    const list = await t.http.get(`${base}/${e.id}/deliveries/?limit=100`, { token: e.key });
    return list.body.results.find((d: { id: string }) => d.id === deliveryId);
  };
  const attempts = async (e: { id: string; key: string }, deliveryId: string) =>
    (
      await t.http.get(`${base}/${e.id}/deliveries/${deliveryId}/attempts/?ordering=created_at&limit=100`, {
        token: e.key,
      })
    ).body.results as Array<{
      number: number;
      started_at: string;
      response_status: number | null;
      error: string | null;
    }>;
  const settled = (e: { id: string; key: string }, deliveryId: string) =>
    eventually(async () => {
      const d = await delivery(e, deliveryId);
      return d && d.status !== 'pending' ? d : undefined;
    });

  it('signs with Standard Webhooks: the standardwebhooks library verifies the request', async () => {
    const r = await receiver();
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    const [got] = await r.waitFor(1);
    const payload = new Webhook(e.secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });
    expect(payload).toEqual({
      id: queued.event.id,
      type: 'webhook.test',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { webhook: expect.objectContaining({ id: e.id, url: r.url }) },
    });
    expect(got.headers['webhook-id']).toBe(queued.event.id);
    expect(got.headers['content-type']).toBe('application/json');
    expect(String(got.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify(got.body, {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      }),
    ).toThrow();
    const done = await settled(e, queued.id);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, last_response_status: 204, next_attempt_at: null });
  });

  it("delivers a charge's transaction.created and transaction.approved with the transaction as GET shows it", async () => {
    const r = await receiver();
    const s = await payingSeller(t, superuser);
    const e = await endpointFor(r.url, ['transaction.created', 'transaction.approved'], s.sellerId);
    const charge = await t.http.post(
      `/unified/accounts/sellers/${s.sellerId}/transactions`,
      { amount: '25.00', payment_type: 'credit', installments: 1, card: CARDS.visa },
      { token: superuser.access },
    );
    expect(charge.status).toBe(201);
    const got = await r.waitFor(2);
    expect(got.map((g) => g.json.type).sort()).toEqual(['transaction.approved', 'transaction.created']);
    const shown = await t.http.get(`/unified/accounts/sellers/${s.sellerId}/transactions/${charge.body.id}`, {
      token: e.key,
    });
    for (const g of got) expect(g.json.data).toEqual(shown.body);
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(2);
  });

  it('retries failures with the same webhook-id, on the schedule, until a 2xx', async () => {
    const r = await receiver((_req, i) => (i < 2 ? { status: 500, body: 'boom' } : { status: 200, body: 'ok' }));
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    const got = await r.waitFor(3);
    expect(new Set(got.map((g) => g.headers['webhook-id']))).toEqual(new Set([queued.event.id]));
    const done = await settled(e, queued.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      last_response_status: 200,
      last_response_body: 'ok',
    });
    const list = await attempts(e, queued.id);
    expect(list.map((a) => [a.number, a.response_status, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 500, 'HTTP 500'],
      [3, 200, null],
    ]);
    for (let i = 1; i < got.length; i++) {
      expect(got[i].at - got[i - 1].at).toBeGreaterThanOrEqual(Math.floor(RETRY_SCHEDULE_MS[i - 1] * SCALE));
    }
  });

  it('fails a delivery after the whole schedule (1 + 9 attempts), waiting at least each delay', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    const done = await settled(e, queued.id);
    expect(done).toMatchObject({ status: 'failed', attempts: 10, last_response_status: 500, next_attempt_at: null });
    expect(r.forEvent(queued.event.id)).toHaveLength(10);
    const list = await attempts(e, queued.id);
    for (let i = 1; i < list.length; i++) {
      const gap = Date.parse(list[i].started_at) - Date.parse(list[i - 1].started_at);
      expect(gap).toBeGreaterThanOrEqual(Math.floor(RETRY_SCHEDULE_MS[i - 1] * SCALE));
    }
  });

  it('times out a receiver that hangs, and one that resets the connection, then retries', async () => {
    const hang = await receiver((_req, i) => (i === 0 ? 'hang' : { status: 200 }));
    const reset = await receiver((_req, i) => (i === 0 ? 'reset' : { status: 200 }));
    const h = await endpointFor(hang.url);
    const x = await endpointFor(reset.url);
    const [hq, xq] = [await sendTest(h), await sendTest(x)];
    const [hd, xd] = [await settled(h, hq.id), await settled(x, xq.id)];
    expect(hd).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(xd).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((await attempts(h, hq.id))[0]).toMatchObject({ response_status: null, error: 'Timed out after 2 s' });
    expect((await attempts(x, xq.id))[0]).toMatchObject({
      response_status: null,
      error: 'Connection reset by the receiver',
    });
  });

  it('does not follow redirects: a 301 is a failure', async () => {
    const target = await receiver();
    const r = await receiver((_req, i) =>
      i === 0 ? { status: 301, headers: { location: target.url } } : { status: 200 },
    );
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    await settled(e, queued.id);
    expect((await attempts(e, queued.id))[0]).toMatchObject({
      response_status: 301,
      error: 'HTTP 301: redirects are not followed',
    });
    expect(target.received).toHaveLength(0);
  });

  it('honours Retry-After on 429', async () => {
    const r = await receiver((_req, i) =>
      i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 },
    );
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    const [first] = await r.waitFor(1);
    const waiting = await eventually(async () => {
      const d = await delivery(e, queued.id);
      return d?.last_response_status === 429 ? d : undefined;
    });
    expect(Date.parse(waiting.next_attempt_at) - Date.parse(waiting.last_attempt_at)).toBeGreaterThanOrEqual(1000);
    const got = await r.waitFor(2);
    expect(got[1].at - first.at).toBeGreaterThanOrEqual(1000);
    expect(await settled(e, queued.id)).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('disables the endpoint on 410, fails its pending deliveries and e-mails the seller', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const e = await endpointFor(r.url);
    const seller = await t.http.get(`/sellers/${e.seller}`, { token: superuser.access });
    const mails = smtp.received.length;
    const queued = await sendTest(e);
    expect(await settled(e, queued.id)).toMatchObject({ status: 'failed', attempts: 1, last_response_status: 410 });
    const endpoint = await eventually(async () => {
      const res = await t.http.get(`${base}/${e.id}/`, { token: e.key });
      return res.body.active === false ? res.body : undefined;
    });
    expect(endpoint.disabled_reason).toBe('The receiver answered 410 Gone.');
    const mail = await smtp.waitForMail(seller.body.email, mails);
    expect(mail.raw).toContain(e.id);
    expect((await t.http.post(`${base}/${e.id}/test/`, undefined, { token: e.key })).body.code).toBe(
      'webhook_inactive',
    );
  });

  it('disables an endpoint whose deliveries all failed for 5 days (scaled) and e-mails the seller', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const e = await endpointFor(r.url);
    const seller = await t.http.get(`/sellers/${e.seller}`, { token: superuser.access });
    const mails = smtp.received.length;
    const endpoint = await eventually(async () => {
      const res = await t.http.get(`${base}/${e.id}/`, { token: e.key });
      if (res.body.active) await t.http.post(`${base}/${e.id}/test/`, undefined, { token: e.key });
      return res.body.active === false ? res.body : undefined;
    }, 30_000);
    expect(endpoint.disabled_reason).toBe('Every delivery has failed for 5 days.');
    await smtp.waitForMail(seller.body.email, mails);
    const pending = await t.http.get(`${base}/${e.id}/deliveries/?status=pending`, { token: e.key });
    expect(pending.body.results).toEqual([]);
  });

  it('gives each delivery its whole schedule: an endpoint failing for 5 days is not disabled at a first failure', async () => {
    // Every attempt fails until the first attempt of the second delivery; the one after succeeds.
    const r = await receiver((_req, i) => (i <= RETRY_SCHEDULE_MS.length + 1 ? { status: 500 } : { status: 200 }));
    const e = await endpointFor(r.url);
    const first = await sendTest(e);
    expect(await settled(e, first.id)).toMatchObject({ status: 'failed', attempts: RETRY_SCHEDULE_MS.length + 1 });
    const failingSince = async () =>
      (await t.db.query('SELECT failing_since FROM webhook_endpoints WHERE id = $1', [e.id])).rows[0].failing_since;
    const since: Date = await failingSince();
    // Nothing succeeded for more than 5 days (scaled); the next delivery's first attempt fails.
    const fiveDays = 5 * 24 * 3_600_000 * SCALE;
    await new Promise((resolve) => setTimeout(resolve, since.getTime() + fiveDays - Date.now() + 300));
    const second = await sendTest(e);
    expect(await settled(e, second.id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((await t.http.get(`${base}/${e.id}/`, { token: e.key })).body).toMatchObject({
      active: true,
      disabled_reason: null,
    });
    expect(await failingSince()).toBeNull();
  });

  it('disables for failures only an endpoint whose streak has gone on that long, as read while disabling it', async () => {
    const r = await receiver();
    const e = await endpointFor(r.url);
    const repository = t.app.get(WebhooksRepository);
    const disable = () =>
      t.app.get(DataSource).transaction((manager) => repository.disableEndpoint(manager, e.id, 'Failing.', 60_000));
    const failingFor = (seconds: number) =>
      t.db.query(`UPDATE webhook_endpoints SET failing_since = now() - make_interval(secs => $2) WHERE id = $1`, [
        e.id,
        seconds,
      ]);
    expect(await disable()).toBeNull(); // no streak: it has not failed
    await failingFor(50);
    expect(await disable()).toBeNull(); // a streak younger than asked
    await failingFor(70);
    expect(await disable()).toMatchObject({ url: r.url, seller_id: e.seller });
    expect((await t.http.get(`${base}/${e.id}/`, { token: e.key })).body).toMatchObject({
      active: false,
      disabled_reason: 'Failing.',
    });
    expect(await disable()).toBeNull(); // already disabled
  });

  it('signs with every secret retired in the last 24 hours after rotate_secret', async () => {
    const r = await receiver();
    const e = await endpointFor(r.url);
    const rotate = async () =>
      (await t.http.post(`${base}/${e.id}/rotate_secret/`, undefined, { token: e.key })).body.secret as string;
    const headersOf = (got: { headers: Record<string, unknown> }) => ({
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature']),
    });
    const rotated = await rotate();
    await sendTest(e);
    const [first] = await r.waitFor(1);
    const headers = headersOf(first);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(new Webhook(e.secret).verify(first.body, headers)).toBeTruthy();
    expect(new Webhook(rotated).verify(first.body, headers)).toBeTruthy();

    // A second rotation within the day: a receiver still on the first secret keeps verifying.
    const again = await rotate();
    await sendTest(e);
    const second = (await r.waitFor(2))[1];
    const signed = headersOf(second);
    expect(signed['webhook-signature'].split(' ')).toHaveLength(3);
    for (const secret of [e.secret, rotated, again])
      expect(new Webhook(secret).verify(second.body, signed)).toBeTruthy();

    // Once a retired secret's 24 hours are up, it signs no more.
    await t.db.query(`UPDATE webhook_retired_secrets SET expires_at = now() WHERE endpoint_id = $1 AND secret = $2`, [
      e.id,
      e.secret,
    ]);
    await sendTest(e);
    const third = (await r.waitFor(3))[2];
    const later = headersOf(third);
    expect(later['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(e.secret).verify(third.body, later)).toThrow();
    expect(new Webhook(again).verify(third.body, later)).toBeTruthy();
  });

  it('retries a delivery by hand, whatever its state, with the same webhook-id', async () => {
    const r = await receiver();
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    await settled(e, queued.id);
    const retried = await t.http.post(`${base}/${e.id}/deliveries/${queued.id}/retry/`, undefined, { token: e.key });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: queued.id, status: 'pending' });
    const got = await r.waitFor(2);
    expect(got[1].headers['webhook-id']).toBe(queued.event.id);
    expect(
      await eventually(async () => {
        const d = await delivery(e, queued.id);
        return d.status === 'succeeded' && d.attempts === 2 ? d : undefined;
      }),
    ).toBeTruthy();
  });

  it.each(['retry', 'replay'] as const)(
    'a %s asked for while an attempt is in flight goes out when that attempt ends, not lost',
    async (action) => {
      // Delivered; then a retry by hand hangs until the worker gives up (2 s); the next request is answered.
      const r = await receiver((_request, index) => (index === 1 ? 'hang' : { status: 204 }));
      const s = await payingSeller(t, superuser);
      const e = await endpointFor(r.url, ['transaction.approved'], s.sellerId);
      const since = new Date().toISOString();
      const charge = await t.http.post(
        `/unified/accounts/sellers/${s.sellerId}/transactions`,
        { amount: '10.00', payment_type: 'credit', card: CARDS.visa },
        { token: superuser.access },
      );
      expect(charge.status).toBe(201);
      const [first] = await r.waitFor(1);
      const queued = (await t.http.get(`${base}/${e.id}/deliveries/`, { token: e.key })).body.results[0];
      expect(queued.event.id).toBe(first.json.id);
      await settled(e, queued.id);
      const retry = `${base}/${e.id}/deliveries/${queued.id}/retry/`;
      expect((await t.http.post(retry, undefined, { token: e.key })).status).toBe(202);
      await r.waitFor(2);
      // Asked for during that attempt, a single one: its failure would end the delivery.
      const asked =
        action === 'retry'
          ? await t.http.post(retry, undefined, { token: e.key })
          : await t.http.post(`${base}/${e.id}/replay/`, { since }, { token: e.key });
      expect(asked.status).toBe(202);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(r.received).toHaveLength(2); // the attempt in flight is not doubled: the caps hold
      const third = (await r.waitFor(3))[2];
      expect(third.at - r.received[1].at).toBeGreaterThanOrEqual(1_900); // after the hanging one gave up
      const done = await eventually(async () => {
        const d = await delivery(e, queued.id);
        return d.status === 'succeeded' && d.attempts === 3 ? d : undefined;
      });
      expect(done).toMatchObject({ last_response_status: 204 });
      const all = await attempts(e, queued.id);
      expect(all.map((a) => [a.number, a.response_status])).toEqual([
        [1, 204],
        [2, null],
        [3, 204],
      ]);
    },
  );

  it('a manual retry of a pending delivery is one attempt more: a failure leaves its retry schedule as it was', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    await r.waitFor(1);
    // Pinned between attempts at a later step of the schedule, its next automatic attempt an hour away.
    const pinned = await eventually(async () => {
      const { rows } = await t.db.query(
        `UPDATE webhook_deliveries SET schedule_step = 3, next_attempt_at = date_trunc('second', now()) + interval '1 hour'
          WHERE id = $1 AND status = 'pending' AND locked_until IS NULL RETURNING attempts, next_attempt_at`,
        [queued.id],
      );
      return rows[0] as { attempts: number; next_attempt_at: Date } | undefined;
    });
    for (let click = 1; click <= 3; click++) {
      const retried = await t.http.post(`${base}/${e.id}/deliveries/${queued.id}/retry/`, undefined, { token: e.key });
      expect(retried.status).toBe(202);
      const after = await eventually(async () => {
        const { rows } = await t.db.query(
          `SELECT attempts, schedule_step, next_attempt_at, resume_at FROM webhook_deliveries
            WHERE id = $1 AND locked_until IS NULL AND attempts = $2`,
          [queued.id, pinned.attempts + click],
        );
        return rows[0]?.next_attempt_at > new Date() ? rows[0] : undefined;
      });
      // Back at the automatic attempt put aside (to the few milliseconds between the worker's clock and the database's).
      expect(Math.abs(after.next_attempt_at.getTime() - pinned.next_attempt_at.getTime())).toBeLessThan(1_000);
      expect(after).toMatchObject({ attempts: pinned.attempts + click, schedule_step: 3, resume_at: null });
    }
    expect((await delivery(e, queued.id)).status).toBe('pending');
  });

  it("replays a period's events after an outage, once per endpoint and event", async () => {
    const r = await receiver();
    const s = await payingSeller(t, superuser);
    const e = await endpointFor(r.url, ['transaction.approved'], s.sellerId);
    await t.http.patch(`${base}/${e.id}/`, { active: false }, { token: e.key });
    const since = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      const charge = await t.http.post(
        `/unified/accounts/sellers/${s.sellerId}/transactions`,
        { amount: `1${i}.00`, payment_type: 'credit', installments: 1, card: CARDS.visa },
        { token: superuser.access },
      );
      expect(charge.status).toBe(201);
    }
    await eventually(async () => {
      const { rows } = await t.db.query(
        `SELECT count(*)::int AS n FROM outbox_events WHERE seller_id = $1 AND dispatched_at IS NULL`,
        [s.sellerId],
      );
      return rows[0].n === 0;
    });
    expect(r.received).toHaveLength(0);
    await t.http.patch(`${base}/${e.id}/`, { active: true }, { token: e.key });
    const replay = await t.http.post(`${base}/${e.id}/replay/`, { since }, { token: e.key });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ queued: 3 });
    const got = await r.waitFor(3);
    expect(got.every((g) => g.json.type === 'transaction.approved')).toBe(true);
    const created = await t.http.post(
      `${base}/${e.id}/replay/`,
      { since, event_types: ['transaction.created'] },
      { token: e.key },
    );
    expect(created.body).toEqual({ queued: 0 }); // the endpoint does not receive transaction.created
    const again = await t.http.post(`${base}/${e.id}/replay/`, { since }, { token: e.key });
    expect(again.body).toEqual({ queued: 3 });
    await r.waitFor(6);
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1`, [
      e.id,
    ]);
    expect(rows[0].n).toBe(3);
  });

  it('keeps a slow endpoint from delaying others (at most 2 requests in flight per endpoint)', async () => {
    const slow = await receiver(() => 'hang');
    const fast = await receiver();
    const s = await endpointFor(slow.url);
    const f = await endpointFor(fast.url);
    for (let i = 0; i < 6; i++) await sendTest(s);
    await slow.waitFor(2);
    await sendTest(f);
    await fast.waitFor(1);
    // The fast endpoint was served while the slow one still held its two requests (2 s timeout).
    expect(slow.received.length).toBeLessThanOrEqual(2);
  });

  it('keeps a slow endpoint from delaying another endpoint on the same host (the cap is per endpoint, not per origin)', async () => {
    const shared = await receiver((r) => (r.path === '/slow' ? 'hang' : { status: 204 }));
    const origin = `http://127.0.0.1:${shared.port}`;
    const s = await endpointFor(`${origin}/slow`);
    const f = await endpointFor(`${origin}/fast`);
    const onPath = (path: string) => (r: ReceivedWebhook) => r.path === path;
    for (let i = 0; i < 6; i++) await sendTest(s);
    await shared.waitFor(2, onPath('/slow'));
    for (let i = 0; i < 3; i++) await sendTest(f);
    await shared.waitFor(3, onPath('/fast'));
    // All three were served while the slow endpoint still held its two requests (2 s timeout).
    expect(shared.received.filter(onPath('/slow'))).toHaveLength(2);
  });

  it('purges deliveries older than 30 days and dispatched events older than 90 days', async () => {
    const r = await receiver();
    const e = await endpointFor(r.url);
    const queued = await sendTest(e);
    await settled(e, queued.id);
    await t.db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE id = $1`, [
      queued.id,
    ]);
    await t.db.query(`UPDATE outbox_events SET created_at = now() - interval '91 days' WHERE id = $1`, [
      queued.event.id,
    ]);
    const purged = await t.app.get(WebhookWorker).purgeOld();
    expect(purged.deliveries).toBeGreaterThanOrEqual(1);
    expect(purged.events).toBeGreaterThanOrEqual(1);
    const left = await t.db.query(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE id = $1)::int AS d,
              (SELECT count(*) FROM webhook_attempts WHERE delivery_id = $1)::int AS a,
              (SELECT count(*) FROM outbox_events WHERE id = $2)::int AS e`,
      [queued.id, queued.event.id],
    );
    expect(left.rows[0]).toEqual({ d: 0, a: 0, e: 0 });
  });
});
