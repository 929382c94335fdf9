import { createApiKey, createSeller, createUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';
import { startWorkerProcess, WorkerProcess } from '../support/worker-process';

const base = '/integrations/webhooks';

async function sellerWithEndpoint(t: TestApp, url: string) {
  const superuser = await createUser(t, { superuser: true });
  const seller = await createSeller(t, superuser);
  const key = (await createApiKey(t, superuser.access, seller)).key;
  const res = await t.http.post(`${base}/`, { url, events: ['*'] }, { token: key });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
  return { key, id: res.body.id as string };
}

/** Deliveries in `npm run worker` processes: several at once, one killed in the middle of a batch. */
describe('webhook worker processes', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    t = await startTestApp(); // the API, without workers
    receiver = await new WebhookReceiver(() => ({ status: 200, delayMs: 300 })).start();
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await receiver.stop();
    await t.close();
  });

  it('loses no delivery when a worker is killed mid-batch, and never records an attempt twice', async () => {
    const env = {
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOKS_TIMEOUT_SECONDS: '2',
      WEBHOOKS_CONCURRENCY: '8',
      WEBHOOKS_ENDPOINT_CONCURRENCY: '16',
    };
    workers.push(await startWorkerProcess(t.databaseUrl, env), await startWorkerProcess(t.databaseUrl, env));
    const e = await sellerWithEndpoint(t, receiver.url);
    const queued: Array<{ id: string; event: { id: string } }> = [];
    for (let i = 0; i < 40; i++) {
      queued.push((await t.http.post(`${base}/${e.id}/test/`, undefined, { token: e.key })).body);
    }
    await receiver.waitFor(10);
    await workers[0].kill(); // with requests in flight: their claims stay leased until the lease ends
    const succeeded = await eventually(async () => {
      const { rows } = await t.db.query(`SELECT id, status, attempts FROM webhook_deliveries WHERE endpoint_id = $1`, [
        e.id,
      ]);
      return rows.length === 40 && rows.every((r) => r.status === 'succeeded') ? rows : undefined;
    }, 45_000);
    for (const q of queued) expect(receiver.forEvent(q.event.id).length).toBeGreaterThanOrEqual(1);
    // Each attempt number of a delivery was claimed by one worker only: its requests ≤ its attempts.
    for (const d of succeeded) {
      const eventId = queued.find((q) => q.id === d.id)!.event.id;
      expect(receiver.forEvent(eventId).length).toBeLessThanOrEqual(d.attempts);
    }
    const { rows: attempts } = await t.db.query(
      `SELECT a.delivery_id, a.number FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
       WHERE d.endpoint_id = $1`,
      [e.id],
    );
    const keys = attempts.map((a) => `${a.delivery_id}:${a.number}`);
    expect(new Set(keys).size).toBe(keys.length);
    // The surviving worker also delivers what is new.
    const late = (await t.http.post(`${base}/${e.id}/test/`, undefined, { token: e.key })).body;
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === late.event.id);
  });
});

/** The address check at delivery: a name that now resolves to loopback is refused, nothing connects. */
describe('webhook URL safety at delivery', () => {
  let api: TestApp;
  let worker: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    api = await startTestApp(); // registration with WEBHOOKS_ALLOW_PRIVATE_URLS=true
    worker = await startTestApp({
      databaseUrl: api.databaseUrl,
      runWorkers: true,
      env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'false' },
    });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
    await receiver.stop();
  });

  it.each([
    [
      'a DNS name resolving to 127.0.0.1',
      (port: number) => `https://localhost:${port}/hook`,
      /its host localhost resolves to a loopback address \(127\.0\.0\.1\)/,
    ],
    [
      'a loopback address',
      (port: number) => `https://127.0.0.1:${port}/hook`,
      /it points at a loopback address \(127\.0\.0\.1\)/,
    ],
    [
      'an IPv4-mapped loopback address',
      (port: number) => `https://[::ffff:127.0.0.1]:${port}/hook`,
      /loopback address \(IPv4-mapped\)/,
    ],
    ['http', (port: number) => `http://127.0.0.1:${port}/hook`, /it must use https/],
  ])('refuses %s at delivery without connecting', async (_name, url, error) => {
    const e = await sellerWithEndpoint(api, url(receiver.port));
    const queued = (await api.http.post(`${base}/${e.id}/test/`, undefined, { token: e.key })).body;
    const attempt = await eventually(async () => {
      const res = await api.http.get(`${base}/${e.id}/deliveries/${queued.id}/attempts/`, { token: e.key });
      return res.body.results[0];
    });
    expect(attempt.response_status).toBeNull();
    expect(attempt.error).toMatch(/^Address not allowed: /);
    expect(attempt.error).toMatch(error);
    expect(receiver.connections).toBe(0);
  });
});
