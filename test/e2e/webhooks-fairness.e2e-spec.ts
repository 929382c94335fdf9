import { createApiKey, createSeller, createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

const base = '/integrations/webhooks';

/**
 * One seller's slow endpoints never take every request a worker has (WEBHOOKS_SELLER_CONCURRENCY):
 * here a worker sends 4 requests at once, 2 per endpoint and 3 per seller.
 */
describe('webhook delivery across sellers', () => {
  let t: TestApp;
  let superuser: TestUser;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      runWorkers: true,
      env: {
        WEBHOOKS_CONCURRENCY: '4',
        WEBHOOKS_ENDPOINT_CONCURRENCY: '2',
        WEBHOOKS_SELLER_CONCURRENCY: '3',
        WEBHOOKS_TIMEOUT_SECONDS: '10',
      },
    });
    superuser = await createUser(t, { superuser: true });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop())); // first: the hanging requests end at once
    await t.close();
  });

  const receiver = async (reply?: ConstructorParameters<typeof WebhookReceiver>[0]) => {
    const r = await new WebhookReceiver(reply).start();
    receivers.push(r);
    return r;
  };
  const sellerWithKey = async () => {
    const seller = await createSeller(t, superuser);
    return { seller, key: (await createApiKey(t, superuser.access, seller)).key };
  };
  const endpoint = async (key: string, url: string) => {
    const res = await t.http.post(`${base}/`, { url, events: ['*'] }, { token: key });
    if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
    return res.body.id as string;
  };
  const sendTest = async (key: string, id: string) =>
    expect((await t.http.post(`${base}/${id}/test/`, undefined, { token: key })).status).toBe(202);

  it("serves another seller while one seller's slow endpoints hold all the requests they may", async () => {
    const slow = await receiver(() => 'hang');
    const fast = await receiver();
    const a = await sellerWithKey();
    const b = await sellerWithKey();
    const origin = `http://127.0.0.1:${slow.port}`;
    // Three endpoints of one seller, two deliveries each: 6 requests, the endpoint caps allow all 6.
    for (const path of ['/a1', '/a2', '/a3']) {
      const id = await endpoint(a.key, `${origin}${path}`);
      for (let i = 0; i < 2; i++) await sendTest(a.key, id);
    }
    await slow.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 500)); // time to claim a 4th, were it allowed
    expect(slow.received.length).toBe(3);
    // The worker's fourth request goes to the other seller, long before the slow ones time out (10 s).
    await sendTest(b.key, await endpoint(b.key, fast.url));
    await fast.waitFor(1, () => true, 8_000);
    expect(slow.received.length).toBe(3);
  });
});
