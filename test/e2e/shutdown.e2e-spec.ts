import { Client } from 'pg';
import { ApiProcess, spawnApi } from '../support/api-process';
import { createTestDatabase, dropTestDatabase } from '../support/database';

/**
 * SIGTERM under load, on a real API process: readiness turns 503, new requests get the
 * error body, running requests finish, and no client sees a reset connection.
 */
describe('graceful shutdown', () => {
  let databaseUrl: string;
  let api: ApiProcess;

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    api = await spawnApi({ DATABASE_URL: databaseUrl, WORKERS_IN_API: 'true', SHUTDOWN_TIMEOUT: '20' });
    await api.ready();
  });
  afterAll(async () => {
    if (api.child.exitCode === null && api.child.signalCode === null) api.child.kill('SIGKILL');
    await dropTestDatabase(databaseUrl);
  });

  interface Outcome {
    path: string;
    started: number;
    ended: number;
    status?: number;
    body?: any;
    error?: string;
  }

  it('drains: ready 503 first, the error body for new requests, running ones finish, zero resets', async () => {
    const email = `drain-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    const registered = await fetch(`${api.baseUrl}/user/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password, name: 'Drain' }),
    });
    expect(registered.status).toBe(201);

    const outcomes: Outcome[] = [];
    let stopping = false;
    const call = async (path: string, init?: RequestInit): Promise<boolean> => {
      const outcome: Outcome = { path, started: performance.now(), ended: 0 };
      try {
        const res = await fetch(`${api.baseUrl}${path}`, init);
        const text = await res.text();
        outcome.status = res.status;
        try {
          outcome.body = JSON.parse(text);
        } catch {
          outcome.body = text;
        }
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        outcome.error = cause?.code ?? cause?.message ?? String(error);
      }
      outcome.ended = performance.now();
      outcomes.push(outcome);
      // A client (or the balancer in front of it) that got 503 service_unavailable goes elsewhere;
      // so does one whose connection is refused (the listener closed).
      return outcome.error !== 'ECONNREFUSED' && outcome.body?.code !== 'service_unavailable';
    };
    let registrations = 0;
    // Registration hashes a password (tens of milliseconds of work): requests are running at any time.
    const register = () =>
      call('/user/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `load-${++registrations}-${email}`, password, name: 'Load' }),
      });
    let exited = false;
    void api.exited.then(() => (exited = true));
    const worker = async (i: number) => {
      while (!exited) {
        const more = i % 4 === 0 ? await call('/health/ready') : await register();
        if (!more) {
          if (stopping) return;
          throw new Error(`refused before the signal: ${JSON.stringify(outcomes.at(-1))}`);
        }
      }
    };
    const workers = Array.from({ length: 12 }, (_, i) => worker(i));

    while (outcomes.filter((o) => o.status === 201).length < 30) await new Promise((r) => setTimeout(r, 20));
    const signalledAt = performance.now();
    stopping = true;
    api.child.kill('SIGTERM');
    await Promise.all(workers);
    const exit = await api.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    const resets = outcomes.filter((o) => o.error && o.error !== 'ECONNREFUSED');
    expect(resets).toEqual([]);
    const nonContract = outcomes.filter(
      (o) =>
        o.status !== undefined &&
        o.status >= 400 &&
        !(typeof o.body?.code === 'string' && typeof o.body?.request_id === 'string' && o.body.statusCode === o.status),
    );
    expect(nonContract).toEqual([]);

    const after = outcomes.filter((o) => o.ended > signalledAt && o.status !== undefined);
    // Requests running when the signal came finished normally.
    const finished = after.filter((o) => o.started < signalledAt && o.status === 201 && o.path === '/user/register');
    expect(finished.length).toBeGreaterThan(0);
    // New ones were answered 503 with the service's error body; readiness among them.
    const refused = after.filter((o) => o.started > signalledAt && o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0].body).toMatchObject({ code: 'service_unavailable', request_id: expect.any(String) });
    // Readiness answered 503 during the drain. Its workers always have a call in flight, so one
    // sent just before the signal may be the one refused: counted by when it ended.
    expect(
      after.some((o) => o.path === '/health/ready' && o.status === 503 && o.body?.code === 'service_unavailable'),
    ).toBe(true);
    // Once draining has begun, nothing new is served.
    const drainSeenAt = Math.min(...refused.map((o) => o.ended));
    expect(after.filter((o) => o.started > drainSeenAt && o.status! < 300)).toEqual([]);
    expect(api.output()).toMatch(/SIGTERM received: draining requests/);
    expect(api.output()).toMatch(/Stopped/);
  });

  it('answers a request still running when SHUTDOWN_TIMEOUT is up with 503 and the error body, not a reset', async () => {
    const short = await spawnApi({ DATABASE_URL: databaseUrl, SHUTDOWN_TIMEOUT: '1' });
    const blocker = new Client({ connectionString: databaseUrl });
    await blocker.connect();
    try {
      await short.ready();
      // A registration that waits on a lock of the users table for longer than the drain may last.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const pending = fetch(`${short.baseUrl}/user/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: `cut-${Date.now()}@example.com`,
          password: 'correct horse battery',
          name: 'Cut',
        }),
      });
      await new Promise((r) => setTimeout(r, 300));
      short.child.kill('SIGTERM');
      const res = await pending;
      expect(res.status).toBe(503);
      expect(res.headers.get('connection')).toBe('close');
      expect(await res.json()).toMatchObject({
        statusCode: 503,
        code: 'service_unavailable',
        message: expect.stringContaining('outcome is unknown'),
        request_id: res.headers.get('x-request-id'),
      });
      await blocker.query('ROLLBACK');
      expect(await short.exited).toEqual({ code: 0, signal: null });
      expect(short.output()).toMatch(/1 request\(s\) still running after 1 s were cut/);
    } finally {
      if (short.child.exitCode === null && short.child.signalCode === null) short.child.kill('SIGKILL');
      await blocker.end();
    }
  });
});
