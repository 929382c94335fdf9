import { createApiKey, createSeller, createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';

const base = '/integrations/webhooks';

/**
 * A worker sending `concurrency` requests at once, at most 2 per endpoint and 3 per seller
 * (WEBHOOKS_SELLER_CONCURRENCY), with `timeoutSeconds` for an answer, set up around the
 * describe block that calls it.
 */
function deliveryWorker(concurrency: number, timeoutSeconds: number) {
  let t: TestApp;
  let superuser: TestUser;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      runWorkers: true,
      env: {
        WEBHOOKS_CONCURRENCY: String(concurrency),
        WEBHOOKS_ENDPOINT_CONCURRENCY: '2',
        WEBHOOKS_SELLER_CONCURRENCY: '3',
        WEBHOOKS_TIMEOUT_SECONDS: String(timeoutSeconds),
      },
    });
    superuser = await createUser(t, { superuser: true });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop())); // first: the hanging requests end at once
    await t.close();
  });

  return {
    db: () => t.db,
    receiver: async (reply?: ConstructorParameters<typeof WebhookReceiver>[0]) => {
      const r = await new WebhookReceiver(reply).start();
      receivers.push(r);
      return r;
    },
    sellerWithKey: async () => {
      const seller = await createSeller(t, superuser);
      return { seller, key: (await createApiKey(t, superuser.access, seller)).key };
    },
    endpoint: async (key: string, url: string) => {
      const res = await t.http.post(`${base}/`, { url, events: ['*'] }, { token: key });
      if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
      return res.body.id as string;
    },
    sendTest: async (key: string, id: string) =>
      expect((await t.http.post(`${base}/${id}/test/`, undefined, { token: key })).status).toBe(202),
  };
}

describe('webhook delivery across sellers', () => {
  const w = deliveryWorker(4, 10);

  it("serves another seller while one seller's slow endpoints hold all the requests they may", async () => {
    const slow = await w.receiver(() => 'hang');
    const fast = await w.receiver();
    const a = await w.sellerWithKey();
    const b = await w.sellerWithKey();
    const origin = `http://127.0.0.1:${slow.port}`;
    // Three endpoints of one seller, two deliveries each: 6 requests, the endpoint caps allow all 6.
    for (const path of ['/a1', '/a2', '/a3']) {
      const id = await w.endpoint(a.key, `${origin}${path}`);
      for (let i = 0; i < 2; i++) await w.sendTest(a.key, id);
    }
    await slow.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 500)); // time to claim a 4th, were it allowed
    expect(slow.received.length).toBe(3);
    // The worker's fourth request goes to the other seller, long before the slow ones time out (10 s).
    await w.sendTest(b.key, await w.endpoint(b.key, fast.url));
    await fast.waitFor(1, () => true, 8_000);
    expect(slow.received.length).toBe(3);
  });
});

describe("webhook delivery across one seller's endpoints", () => {
  const w = deliveryWorker(8, 2);

  it("leaves a seller's requests to its healthy endpoint while its dead endpoints have a backlog", async () => {
    const slow = await w.receiver(() => 'hang');
    const fast = await w.receiver();
    const c = await w.sellerWithKey();
    const origin = `http://127.0.0.1:${slow.port}`;
    // Three dead endpoints (as many as the seller's cap) with 30 deliveries each: a backlog of
    // many rounds of 2 s, each endpoint's more than a claim looks at (4 per free request); the
    // worker has 5 requests more.
    for (const path of ['/c1', '/c2', '/c3']) {
      const id = await w.endpoint(c.key, `${origin}${path}`);
      for (let i = 0; i < 30; i++) await w.sendTest(c.key, id);
    }
    // Each first attempt times out: from then on each endpoint is failing, gets one request at a
    // time, and together they leave one of the seller's 3 requests free.
    const failing = async () => {
      const { rows } = await w.db().query(
        `SELECT count(*) FILTER (WHERE e.failing_since IS NOT NULL)::int AS failing,
                (SELECT count(*)::int FROM webhook_deliveries d JOIN webhook_endpoints x ON x.id = d.endpoint_id
                  WHERE x.seller_id = $1 AND d.locked_until > now()) AS in_flight
           FROM webhook_endpoints e WHERE e.seller_id = $1`,
        [c.seller],
      );
      return rows[0].failing === 3 && rows[0].in_flight <= 2;
    };
    await eventually(failing, 15_000);
    // The seller's healthy endpoint gets its deliveries at once, the dead ones' older backlog
    // notwithstanding (it would otherwise wait for that backlog).
    const healthy = await w.endpoint(c.key, fast.url);
    await w.sendTest(c.key, healthy);
    await w.sendTest(c.key, healthy);
    await fast.waitFor(2, () => true, 1_500);
  });
});
