import { randomUUID } from 'node:crypto';
import { createTestDatabase, dropTestDatabase } from '../support/database';
import { FixturesModule } from '../support/fixtures.module';
import { createUser } from '../support/identity';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The database silently unreachable (a partition: packets dropped, nothing refused). Requests
 * must answer 503 while it lasts, not hang until it ends, and the service heals by itself.
 * The partition here lasts until every request has answered: one that waited for the database
 * would never answer, and the test would time out.
 */
describe('network partition to the database', () => {
  let t: TestApp;
  let proxy: TcpProxy;
  let directUrl: string;

  beforeAll(async () => {
    directUrl = await createTestDatabase();
    const target = new URL(directUrl);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    t = await startTestApp({
      databaseUrl: proxy.urlFor(directUrl),
      imports: [FixturesModule],
      env: { DATABASE_QUERY_TIMEOUT: '2' },
    });
  });
  afterAll(async () => {
    await proxy.cut(); // closes the abandoned connections too
    await t.close();
    await dropTestDatabase(directUrl);
  });

  it('answers 503 service_unavailable during the partition, and recovers by itself after it', async () => {
    const user = await createUser(t);
    // Several pooled connections exist and sit idle: the partition catches them unaware.
    await Promise.all(Array.from({ length: 6 }, () => t.http.get('/user/me', { token: user.access })));
    // The shared connections too (the public event page reads the event through them).
    const eventPage = () => t.http.get(`/event/event/${randomUUID()}`);
    expect((await Promise.all([eventPage(), eventPage()])).map((r) => r.status)).toEqual([404, 404]);

    proxy.stall();
    const during = await Promise.all([
      t.http.get('/user/me', { token: user.access }),
      t.http.get('/user/me', { token: user.access }),
      t.http.post('/test-fixtures/records', { amount: '1.00' }, { headers: { 'idempotency-key': 'partition-1' } }),
      t.http.get('/health/ready'),
      eventPage(),
      eventPage(),
      ...Array.from({ length: 12 }, () => t.http.get('/user/me', { token: user.access })),
    ]);
    for (const res of during) {
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 503, code: 'service_unavailable' });
      expect(res.headers.get('retry-after')).toBeTruthy();
    }
    // Once the pool's connections are known dead, later requests still answer (new connections time out).
    const later = await t.http.get('/user/me', { token: user.access });
    expect(later.status).toBe(503);
    expect((await t.http.get('/health/live')).status).toBe(200);

    // The connections caught in the partition never answer again; only new ones work.
    proxy.resume({ abandon: true });
    let ready = 0;
    for (let attempt = 0; attempt < 100 && ready !== 200; attempt++) {
      ready = (await t.http.get('/health/ready')).status;
      if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready).toBe(200);
    // Every request works again: no connection caught in the partition is handed out any more.
    const after = await Promise.all(Array.from({ length: 12 }, () => t.http.get('/user/me', { token: user.access })));
    expect(after.map((r) => r.status)).toEqual(Array(12).fill(200));
    // The shared connections caught in the partition were replaced as well.
    expect((await Promise.all([eventPage(), eventPage()])).map((r) => r.status)).toEqual([404, 404]);
    const write = await t.http.post(
      '/test-fixtures/records',
      { amount: '1.00' },
      { headers: { 'idempotency-key': 'partition-2' } },
    );
    expect(write.status).toBe(201);
  });
});
