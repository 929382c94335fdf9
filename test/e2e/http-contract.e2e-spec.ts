import { Client } from 'pg';
import { LogCapture } from '../support/log-capture';
import { createTestDatabase, dropTestDatabase } from '../support/database';
import { FixturesModule } from '../support/fixtures.module';
import { createUser } from '../support/identity';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';

/** The HTTP contract of API.md section 1 that every route shares. */
describe('HTTP contract', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await startTestApp({
      imports: [FixturesModule],
      env: { LOG_LEVEL: 'info' },
      logDestination: logs,
    });
  });
  afterAll(() => t.close());

  const expectErrorBody = (body: any, status: number, code: string) => {
    expect(body).toEqual(
      expect.objectContaining({
        statusCode: status,
        code,
        message: expect.any(String),
        request_id: expect.any(String),
      }),
    );
    expect(typeof body.error).toBe('string');
  };

  describe('request ids', () => {
    it('puts a new X-Request-Id on every response, matching the error body', async () => {
      const ok = await t.http.get('/health/live');
      expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      const missing = await t.http.get('/nope');
      expect(missing.headers.get('x-request-id')).toBe(missing.body.request_id);
    });

    it('keeps the X-Request-Id the client sent: 1 to 128 visible ASCII characters but " and \\', async () => {
      for (const sent of ['client-trace-123', 'a.b/c', 'dGhlIGlk+/=', 'a,b', '{0b7e6f0c}', 'x'.repeat(128)]) {
        const res = await t.http.get('/nope', { headers: { 'x-request-id': sent } });
        expect(res.headers.get('x-request-id')).toBe(sent);
        expect(res.body.request_id).toBe(sent);
      }
    });

    it('replaces a sent X-Request-Id with spaces, quotes, backslashes, other characters or over 128 characters', async () => {
      for (const sent of ['bad id with spaces', 'x'.repeat(129), 'caf\u00e9', 'a"b', 'a\\b']) {
        const res = await t.http.get('/health/live', { headers: { 'x-request-id': sent } });
        expect(res.headers.get('x-request-id')).not.toBe(sent);
        expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      }
    });
  });

  describe('routing', () => {
    it('answers 404 with the error body for an unknown path', async () => {
      const res = await t.http.get('/nope');
      expect(res.status).toBe(404);
      expectErrorBody(res.body, 404, 'not_found');
      expect(res.body.message).toBe('No route matches GET /nope.');
    });

    it('answers HEAD wherever GET is served: the same status and headers, no body', async () => {
      const live = await fetch(`${t.baseUrl}/health/live`, { method: 'HEAD' });
      expect(live.status).toBe(200);
      expect(live.headers.get('x-request-id')).toEqual(expect.any(String));
      expect(await live.text()).toBe('');
      // Authentication applies as to GET.
      const me = await fetch(`${t.baseUrl}/user/me`, { method: 'HEAD' });
      expect(me.status).toBe(401);
      expect(me.headers.get('www-authenticate')).toBe('Bearer');
      expect(await me.text()).toBe('');
    });

    it('answers 405 with Allow and the error body for a known path and another method', async () => {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const res = await t.http.request(method, '/health/live');
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('GET, HEAD');
        expectErrorBody(res.body, 405, 'method_not_allowed');
      }
    });

    it('answers 405 before looking at credentials', async () => {
      const res = await t.http.post('/health/live', undefined, { token: 'not-a-valid-token' });
      expect(res.status).toBe(405);
    });

    it('answers 405 for another method of a path whatever the length of its parameters; 414 for its own', async () => {
      for (const id of ['a'.repeat(100), 'a'.repeat(101), 'a'.repeat(5000)]) {
        const path = `/uniconta/seller/abc/virtualaccounts/${id}/`;
        const deleted = await t.http.request('DELETE', path);
        expect({ length: id.length, status: deleted.status, allow: deleted.headers.get('allow') }).toEqual({
          length: id.length,
          status: 405,
          allow: expect.stringContaining('GET'),
        });
      }
      const read = await t.http.get(`/uniconta/seller/abc/virtualaccounts/${'a'.repeat(101)}/`);
      expect({ status: read.status, code: read.body.code }).toEqual({ status: 414, code: 'uri_too_long' });
      // A method with routes deeper under the parameter (DELETE /sellers/:id/accesses/:access_id)
      // but none at this path: 405 as well, not 414.
      for (const method of ['DELETE', 'POST']) {
        const res = await t.http.request(method, `/sellers/${'a'.repeat(150)}/`);
        expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({
          method,
          status: 405,
          allow: expect.stringContaining('PATCH'),
        });
      }
      const deeper = await t.http.request('DELETE', `/sellers/${'a'.repeat(150)}/accesses/${'b'.repeat(10)}/`);
      expect(deeper.status).toBe(414);
    });

    it('serves paths with and without the trailing slash', async () => {
      expect((await t.http.get('/health/live')).status).toBe(200);
      expect((await t.http.get('/health/live/')).status).toBe(200);
      expect((await t.http.request('DELETE', '/health/live/')).status).toBe(405);
    });
  });

  describe('request bodies', () => {
    it('refuses malformed JSON with 400 invalid_json', async () => {
      const res = await t.http.post('/test-fixtures/echo', undefined, {
        rawBody: '{"name": "x",',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 400, 'invalid_json');
    });

    it('refuses prototype pollution attempts as an unknown field (the body is valid JSON)', async () => {
      const res = await t.http.post('/test-fixtures/echo', undefined, {
        rawBody: '{"name":"x","amount":"1.00","__proto__":{"admin":true}}',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 400, 'validation_failed');
      expect(res.body.errors).toEqual({ ['__proto__']: ['should not exist'] }); // a computed key: an own field
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    });

    it('refuses a body over 1 MiB with 413', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024), amount: '1.00' });
      const res = await t.http.post('/test-fixtures/echo', undefined, {
        rawBody: big,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(413);
      expectErrorBody(res.body, 413, 'payload_too_large');
    });

    it('refuses NUL characters in the body or the query with 400 and the path', async () => {
      const body = await t.http.post('/test-fixtures/echo', {
        name: 'a\u0000b',
        amount: '1.00',
        customer: { name: 'x' },
      });
      expect(body.status).toBe(400);
      expect(body.body.errors).toEqual({ name: ['must not contain NUL characters'] });
      const nested = await t.http.post('/test-fixtures/echo', {
        name: 'a',
        amount: '1.00',
        customer: { name: '\u0000' },
      });
      expect(nested.body.errors).toEqual({ 'customer.name': ['must not contain NUL characters'] });
      const query = await t.http.get('/health/live?x=%00');
      expect(query.status).toBe(400);
      expect(query.body.errors).toEqual({ 'query.x': ['must not contain NUL characters'] });
    });

    it('refuses bodies that are not JSON with 415', async () => {
      const res = await t.http.post('/test-fixtures/echo', undefined, {
        rawBody: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(res.status).toBe(415);
      expectErrorBody(res.body, 415, 'unsupported_media_type');
      // JSON is UTF-8: a body declared in another charset is refused, not read as UTF-8.
      const body = JSON.stringify({ name: 'x', amount: '1.00' });
      for (const charset of ['utf-16', 'latin1', '"iso-8859-1"']) {
        const other = await t.http.post('/test-fixtures/echo', undefined, {
          rawBody: body,
          headers: { 'content-type': `application/json; charset=${charset}` },
        });
        expect(other.status).toBe(415);
        expectErrorBody(other.body, 415, 'unsupported_media_type');
      }
      for (const charset of ['utf-8', 'UTF8', '"utf-8"', 'us-ascii']) {
        const utf8 = await t.http.post('/test-fixtures/echo', undefined, {
          rawBody: body,
          headers: { 'content-type': `application/json; charset=${charset}` },
        });
        expect(utf8.status).toBe(201);
      }
    });

    it('reports every invalid field under its path in errors', async () => {
      const res = await t.http.post('/test-fixtures/echo', {
        amount: '1.999',
        customer: { name: 42 },
        extra: true,
      });
      expect(res.status).toBe(400);
      expectErrorBody(res.body, 400, 'validation_failed');
      expect(Object.keys(res.body.errors).sort()).toEqual(['amount', 'customer.name', 'extra', 'name']);
      expect(res.body.errors.amount[0]).toMatch(/two decimals/);
      expect(res.body.errors.extra).toEqual(['should not exist']);
    });

    it('refuses money given as a JSON number, a negative or an exponent', async () => {
      for (const amount of [150, '-1.00', '1e3', 'NaN', '10000000.01']) {
        const res = await t.http.post('/test-fixtures/echo', { name: 'x', amount });
        expect(res.status).toBe(400);
        expect(res.body.errors.amount).toBeDefined();
      }
      expect((await t.http.post('/test-fixtures/echo', { name: 'x', amount: '10000000.00' })).status).toBe(201);
    });
  });

  describe('unexpected failures', () => {
    it('answers 500 with the error body and no internals, and logs the cause', async () => {
      const res = await t.http.post('/test-fixtures/boom', {});
      expect(res.status).toBe(500);
      expectErrorBody(res.body, 500, 'internal_error');
      expect(res.text).not.toMatch(/hunter2|secret\/path|at .*\.ts/);
      const logged = logs.lines.find((l) => l.includes(res.body.request_id) && l.includes('Unhandled error'));
      expect(logged).toBeDefined();
      expect(logged).toContain('hunter2');
    });
  });

  describe('request logging', () => {
    it('writes one JSON line per request with its request id and without the Authorization header', async () => {
      const res = await t.http.get('/health/live', {
        token: 'super-secret-token',
        headers: { 'x-request-id': 'log-check-1' },
      });
      expect(res.status).toBe(200);
      const lines = logs.lines.filter((l) => l.includes('log-check-1'));
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]);
      expect(line).toMatchObject({
        request_id: 'log-check-1',
        http: { method: 'GET', route: '/health/live', status: 200 },
      });
      expect(lines[0]).not.toContain('super-secret-token');
    });
  });

  describe('operations endpoints', () => {
    it('reports liveness and readiness', async () => {
      expect((await t.http.get('/health/live')).body).toEqual({ status: 'ok' });
      expect((await t.http.get('/health/ready')).body).toEqual({ status: 'ok' });
    });

    it('exposes Prometheus metrics with request counts and latency by route and status', async () => {
      await t.http.get('/health/live');
      const res = await t.http.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(res.text).toMatch(/http_requests_total\{method="GET",route="\/health\/live",status="200"\} \d+/);
      expect(res.text).toMatch(
        /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/health\/live",status="200"\}/,
      );
    });

    it('serves the OpenAPI document and the interactive docs', async () => {
      const doc = await t.http.get('/docs/openapi.json');
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toMatch(/^3\./);
      expect(Object.keys(doc.body.components.securitySchemes).sort()).toEqual(['api_key', 'jwt', 'manage_token']);
      const ui = await t.http.get('/docs');
      expect(ui.status).toBe(200);
      expect(ui.text).toContain('swagger');
    });
  });
});

describe('database outage', () => {
  let t: TestApp;
  let proxy: TcpProxy;
  let directUrl: string;

  beforeAll(async () => {
    directUrl = await createTestDatabase();
    const target = new URL(directUrl);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    t = await startTestApp({ databaseUrl: proxy.urlFor(directUrl), imports: [FixturesModule] });
  });
  afterAll(async () => {
    await t.close();
    await proxy.cut();
    await dropTestDatabase(directUrl);
  });

  it('answers 503 service_unavailable while the database is unreachable, and recovers by itself', async () => {
    expect((await t.http.get('/health/ready')).status).toBe(200);

    const user = await createUser(t);

    await proxy.cut();
    const authenticated = await t.http.get('/user/me', { token: user.access });
    expect(authenticated.status).toBe(503);
    expect(authenticated.body.code).toBe('service_unavailable');
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.code).toBe('service_unavailable');
    const write = await t.http.post(
      '/test-fixtures/records',
      { amount: '1.00' },
      { headers: { 'idempotency-key': 'outage-1' } },
    );
    expect(write.status).toBe(503);
    expect(write.body.code).toBe('service_unavailable');
    expect((await t.http.get('/health/live')).status).toBe(200);

    await proxy.start();
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await t.http.get('/health/ready')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    const retried = await t.http.post(
      '/test-fixtures/records',
      { amount: '1.00' },
      { headers: { 'idempotency-key': 'outage-2' } },
    );
    expect(retried.status).toBe(201);
  });

  it('answers 503 while the database refuses connections (closed to them), and recovers by itself', async () => {
    const user = await createUser(t);
    const name = new URL(directUrl).pathname.slice(1);
    const adminUrl = new URL(directUrl);
    adminUrl.pathname = '/postgres';
    const admin = new Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      const refused = await t.http.get('/user/me', { token: user.access });
      expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 503, code: 'service_unavailable' });
      const write = await t.http.post('/test-fixtures/records', { amount: '1.00' });
      expect({ status: write.status, code: write.body.code }).toEqual({ status: 503, code: 'service_unavailable' });
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await t.http.get('/user/me', { token: user.access })).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
  });
});
