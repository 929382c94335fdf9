import { request as httpRequest } from 'node:http';
import { Client } from 'pg';
import { IdempotencyService } from '../../src/common/idempotency/idempotency.service';
import { createTestDatabase, dropTestDatabase } from '../support/database';
import { FixturesModule } from '../support/fixtures.module';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Idempotency-Key (API.md section 1), with two application instances on one database
 * standing for two API processes: the store is the database, never process memory.
 */
describe('Idempotency-Key', () => {
  let databaseUrl: string;
  let a: TestApp;
  let b: TestApp;
  let db: Client;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    a = await startTestApp({ databaseUrl, imports: [FixturesModule] });
    b = await startTestApp({ databaseUrl, imports: [FixturesModule] });
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await a.close();
    await b.close();
    await dropTestDatabase(databaseUrl);
  });

  const rowCount = async () => Number((await db.query('SELECT count(*) FROM test_records')).rows[0].count);
  const post = (app: TestApp, key: string | undefined, body: object) =>
    app.http.post('/test-fixtures/records', body, { headers: key === undefined ? {} : { 'idempotency-key': key } });

  it('replays the first response, byte for byte, for the same key and body, on any process, and acts once', async () => {
    const before = await rowCount();
    const first = await post(a, 'key-replay', { amount: '10.00' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await post(b, 'key-replay', { amount: '10.00' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text); // the same bytes, fields in the order first sent
    expect(await rowCount()).toBe(before + 1);
  });

  it('treats bodies with the same fields in another order as the same request', async () => {
    const first = await post(a, 'key-order', { amount: '3.00', delay_ms: 0 });
    const again = await a.http.post('/test-fixtures/records', undefined, {
      rawBody: '{"delay_ms":0,"amount":"3.00"}',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'key-order' },
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('answers 422 idempotency_key_reused when the key comes back with another body', async () => {
    await post(a, 'key-reused', { amount: '10.00' });
    const other = await post(b, 'key-reused', { amount: '11.00' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
  });

  it('answers 409 idempotency_key_in_use while the first request runs, then replays it', async () => {
    const before = await rowCount();
    const slow = post(a, 'key-inflight', { amount: '5.00', delay_ms: 700 });
    await new Promise((r) => setTimeout(r, 200));
    const concurrent = await post(b, 'key-inflight', { amount: '5.00', delay_ms: 700 });
    expect(concurrent.status).toBe(409);
    expect(concurrent.body.code).toBe('idempotency_key_in_use');
    const first = await slow;
    expect(first.status).toBe(201);
    const replay = await post(b, 'key-inflight', { amount: '5.00', delay_ms: 700 });
    expect(replay.body).toEqual(first.body);
    expect(await rowCount()).toBe(before + 1);
  });

  it('lets exactly one of many simultaneous requests with one key act', async () => {
    const before = await rowCount();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(i % 2 ? a : b, 'key-race', { amount: '1.00', delay_ms: 100 })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = new Set(results.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(created.size).toBe(1);
    expect(await rowCount()).toBe(before + 1);
  });

  it('acts every time when no key is sent', async () => {
    const before = await rowCount();
    await post(a, undefined, { amount: '1.00' });
    await post(a, undefined, { amount: '1.00' });
    expect(await rowCount()).toBe(before + 2);
  });

  it('replays a client error as it was answered', async () => {
    const first = await post(a, 'key-error', { amount: '1.00', reject: true });
    expect(first.status).toBe(409);
    expect(first.body.code).toBe('rejected');
    const again = await post(b, 'key-error', { amount: '1.00', reject: true });
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The body as it was sent, the first request's request_id included; the header names this request.
    expect(again.text).toBe(first.text);
    expect(again.headers.get('x-request-id')).not.toBe(first.body.request_id);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
  });

  it('frees the key of a request refused as invalid (400 validation_failed): the corrected request acts', async () => {
    const before = await rowCount();
    const invalid = await post(a, 'key-invalid', { amount: 'ten' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation_failed');
    expect((await db.query(`SELECT 1 FROM idempotency_keys WHERE key = 'key-invalid'`)).rowCount).toBe(0);

    const corrected = await post(b, 'key-invalid', { amount: '10.00' });
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get('idempotent-replayed')).toBeNull();
    const again = await post(a, 'key-invalid', { amount: '10.00' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(corrected.body);
    expect(await rowCount()).toBe(before + 1);
  });

  it('refuses a key longer than 255 characters', async () => {
    const res = await post(a, 'k'.repeat(256), { amount: '1.00' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_idempotency_key');
  });

  it('refuses a key sent twice (HTTP would join them into a third key) or with a control character, doing nothing', async () => {
    const before = await rowCount();
    const twice = await new Promise<{ status: number; body: { code: string; message: string } }>((resolve, reject) => {
      const body = JSON.stringify({ amount: '1.00' });
      const request = httpRequest(`${a.http.baseUrl}/test-fixtures/records`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': ['key-one', 'key-two'] },
      });
      request.on('error', reject);
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      });
      request.end(body);
    });
    expect(twice).toEqual({
      status: 400,
      body: expect.objectContaining({ code: 'invalid_idempotency_key', message: expect.stringContaining('once') }),
    });

    const tab = await post(a, 'key\twith-tab', { amount: '1.00' });
    expect(tab.status).toBe(400);
    expect(tab.body).toMatchObject({ code: 'invalid_idempotency_key', message: expect.stringContaining('control') });
    expect(await rowCount()).toBe(before);

    // One key with a comma of its own is one key.
    expect((await post(a, 'key, with a comma', { amount: '1.00' })).status).toBe(201);
    expect((await post(b, 'key, with a comma', { amount: '1.00' })).headers.get('idempotent-replayed')).toBe('true');
  });

  const postTx = (app: TestApp, key: string, body: object) =>
    app.http.post('/test-fixtures/tx-records', body, { headers: { 'idempotency-key': key } });

  it("records the answer in the change's own database transaction", async () => {
    const first = await postTx(a, 'key-tx', { amount: '1.00' });
    expect(first.status).toBe(201);
    const { rows } = await db.query(
      `SELECT status, response_status, response_body FROM idempotency_keys WHERE key = 'key-tx'`,
    );
    expect(rows).toEqual([{ status: 'completed', response_status: 201, response_body: first.body }]);
    const again = await postTx(b, 'key-tx', { amount: '1.00' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('keeps neither the change nor an answer when the change rolls back, and records the client error', async () => {
    const before = await rowCount();
    const first = await postTx(a, 'key-tx-reject', { amount: '1.00', reject: true });
    expect(first.status).toBe(409);
    expect(await rowCount()).toBe(before);
    const again = await postTx(b, 'key-tx-reject', { amount: '1.00', reject: true });
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('frees an in-progress key once its 60 s lease is over (its request died), not before', async () => {
    const before = await rowCount();
    const first = await postTx(a, 'key-lease', { amount: '1.00' });
    // As if the process had died before commit: the key in progress, without an answer, claimed 61 s ago.
    await db.query(
      `UPDATE idempotency_keys SET status = 'in_progress', response_status = NULL, response_body = NULL,
         lease_until = now() + interval '59 seconds' WHERE key = 'key-lease'`,
    );
    await db.query('DELETE FROM test_records WHERE id = $1', [first.body.id]);
    const busy = await postTx(b, 'key-lease', { amount: '1.00' });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('idempotency_key_in_use');

    await db.query(`UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = 'key-lease'`);
    const retry = await postTx(b, 'key-lease', { amount: '1.00' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await rowCount()).toBe(before + 1);
    const replay = await postTx(a, 'key-lease', { amount: '1.00' });
    expect(replay.body).toEqual(retry.body);
  });

  it('lets a request whose lease ran out commit nothing once another took its key over', async () => {
    const before = await rowCount();
    const slow = postTx(a, 'key-takeover', { amount: '1.00', delay_ms: 800 });
    await new Promise((r) => setTimeout(r, 300));
    await db.query(`UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = 'key-takeover'`);
    const takeover = await postTx(b, 'key-takeover', { amount: '1.00' });
    expect(takeover.status).toBe(201);
    const lapsed = await slow;
    expect(lapsed.status).toBe(409);
    expect(lapsed.body.code).toBe('idempotency_key_in_use');
    expect(await rowCount()).toBe(before + 1);
    const replay = await postTx(a, 'key-takeover', { amount: '1.00' });
    expect(replay.body).toEqual(takeover.body);
  });

  it('scopes public routes to the client address and route: the key on another route is another key', async () => {
    const onTx = await postTx(a, 'key-route', { amount: '1.00' });
    const onPlain = await post(a, 'key-route', { amount: '1.00' });
    expect(onTx.status).toBe(201);
    expect(onPlain.status).toBe(201);
    expect(onPlain.headers.get('idempotent-replayed')).toBeNull();
  });

  it('forgets a key after 24 hours, and the purge job deletes expired keys', async () => {
    await post(a, 'key-old', { amount: '1.00' });
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'key-old'`);
    const before = await rowCount();
    const fresh = await post(b, 'key-old', { amount: '2.00' });
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(await rowCount()).toBe(before + 1);

    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = 'key-old'`);
    const purged = await a.app.get(IdempotencyService).purgeExpired();
    expect(purged).toBe(1);
    expect((await db.query(`SELECT 1 FROM idempotency_keys WHERE key = 'key-old'`)).rowCount).toBe(0);
  });
});

describe('outbox', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ imports: [FixturesModule] });
  });
  afterAll(() => t.close());

  // First in this app, so that no earlier commit's signal is still on its way.
  it('signals the webhook workers after the commit (NOTIFY outside the transaction), and not for a rollback', async () => {
    const listener = new Client({ connectionString: t.databaseUrl });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(message.channel));
      await listener.query('LISTEN outbox_events');
      expect((await t.http.post('/test-fixtures/outbox', { fail: false })).status).toBe(201);
      const deadline = Date.now() + 5_000;
      while (heard.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(['outbox_events']);
      expect((await t.http.post('/test-fixtures/outbox', { fail: true })).status).toBe(500);
      await new Promise((r) => setTimeout(r, 300));
      expect(heard).toEqual(['outbox_events']);
    } finally {
      await listener.end();
    }
  });

  it('stores the event with the change when the transaction commits', async () => {
    const res = await t.http.post('/test-fixtures/outbox', { fail: false });
    expect(res.status).toBe(201);
    const { rows } = await t.db.query(`SELECT type, seller_id, data FROM outbox_events WHERE data->>'record' = $1`, [
      String(res.body.record),
    ]);
    expect(rows).toEqual([
      { type: 'webhook.test', seller_id: null, data: { hello: 'world', record: res.body.record } },
    ]);
  });

  it('stores neither the change nor the event when the transaction rolls back', async () => {
    const events = Number((await t.db.query('SELECT count(*) FROM outbox_events')).rows[0].count);
    const records = Number((await t.db.query('SELECT count(*) FROM test_records')).rows[0].count);
    const res = await t.http.post('/test-fixtures/outbox', { fail: true });
    expect(res.status).toBe(500);
    expect(Number((await t.db.query('SELECT count(*) FROM outbox_events')).rows[0].count)).toBe(events);
    expect(Number((await t.db.query('SELECT count(*) FROM test_records')).rows[0].count)).toBe(records);
  });
});
