import { createServer, type Socket } from 'node:net';
import { Client } from 'pg';
import { QueryFailedError } from 'typeorm';
import { isBusyWithConcurrentUpdates, isDatabaseUnavailable } from '../../src/common/errors/database-errors';
import { poolOptions } from '../../src/database/pg-options';
import { SHARED_CONNECTIONS, SHARED_LOCK_TIMEOUT_MS, SharedConnections } from '../../src/database/shared-connections';
import { createTestDatabase, dropTestDatabase } from '../support/database';

/**
 * The shared connections of short statements (src/database/shared-connections.ts) on a real PostgreSQL:
 * concurrent reads share SHARED_CONNECTIONS connections and each gets its own answer, a failed statement
 * fails alone, a slow read does not hold up reads it could run beside, and a lane whose
 * connection dies fails its reads as unavailable and is replaced.
 */
describe('SharedConnections', () => {
  let url: string;
  let sql: Client;
  let lanes: SharedConnections;

  beforeAll(async () => {
    url = await createTestDatabase();
    sql = new Client({ connectionString: url });
    await sql.connect();
  });
  beforeEach(() => {
    lanes = new SharedConnections({ ...poolOptions({ queryTimeoutSeconds: 5 }), connectionString: url });
  });
  afterEach(() => lanes.onApplicationShutdown());
  afterAll(async () => {
    await sql.end();
    await dropTestDatabase(url);
  });

  const backendOf = async (n: number) =>
    (await lanes.query<{ n: number; pid: number }>('SELECT $1::int AS n, pg_backend_pid() AS pid', [n]))[0];

  it('shares its connections among concurrent reads, each answered with its own rows', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => backendOf(n)));
    expect(answers.map((a) => a.n)).toEqual(Array.from({ length: 40 }, (_, n) => n));
    expect(new Set(answers.map((a) => a.pid)).size).toBe(SHARED_CONNECTIONS);
    // Later reads reuse the same connections.
    const again = await Promise.all(Array.from({ length: 10 }, (_, n) => backendOf(n)));
    expect(new Set([...answers, ...again].map((a) => a.pid)).size).toBe(SHARED_CONNECTIONS);
  });

  it('fails a failed statement alone, as TypeORM reports it', async () => {
    const results = await Promise.allSettled([
      backendOf(1),
      lanes.query('SELECT 1 / $1::int AS n', [0]),
      backendOf(3),
      lanes.query('SELECT $1::int AS n', ['not a number']),
      backendOf(5),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    const [division, cast] = [results[1], results[3]].map((r) => (r as PromiseRejectedResult).reason);
    expect(division).toBeInstanceOf(QueryFailedError);
    expect(division.driverError.code).toBe('22012');
    expect(cast.driverError.code).toBe('22P02');
    expect((await backendOf(6)).n).toBe(6);
  });

  it('sends a read to the lane with the fewest unanswered reads: a slow one holds up only its own lane', async () => {
    await Promise.all([backendOf(0), backendOf(1)]); // both lanes open
    const slow = lanes.query<{ pid: number }>('SELECT pg_sleep(1), pg_backend_pid() AS pid', []);
    const started = Date.now();
    const quick = await backendOf(2);
    expect(Date.now() - started).toBeLessThan(900);
    expect(quick.pid).not.toBe((await slow)[0].pid);
  });

  it('fails the reads of a lane whose connection dies as "database unavailable", and replaces it', async () => {
    const before = await Promise.all(Array.from({ length: 4 }, (_, n) => backendOf(n)));
    const pids = [...new Set(before.map((a) => a.pid))];
    const caught = lanes.query('SELECT pg_sleep(5)', []);
    // Both lanes end: the one running the sleep, and the idle one.
    await sql.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [pids]);
    const error = await caught.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isDatabaseUnavailable(error)).toBe(true);
    // A read sent before the other lane's end is noticed fails the same way; then new connections answer.
    let after: Array<{ n: number; pid: number }> = [];
    for (let attempt = 0; attempt < 50 && after.length === 0; attempt++) {
      after = await Promise.all(Array.from({ length: 4 }, (_, n) => backendOf(n))).catch((e: unknown) => {
        expect(isDatabaseUnavailable(e)).toBe(true);
        return new Promise((resolve) => setTimeout(() => resolve([]), 20));
      });
    }
    expect(after.map((a) => a.n)).toEqual([0, 1, 2, 3]);
    for (const { pid } of after) expect(pids).not.toContain(pid);
  });

  it('fails reads at once when the database cannot be reached, and refuses reads once shut down', async () => {
    const closedPort = new SharedConnections({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 2000,
    });
    const error = await closedPort.query('SELECT 1', []).catch((e: unknown) => e);
    expect(isDatabaseUnavailable(error)).toBe(true);
    await closedPort.onApplicationShutdown();

    await backendOf(1);
    await lanes.onApplicationShutdown();
    const late = await lanes.query('SELECT 1', []).catch((e: unknown) => e);
    expect(isDatabaseUnavailable(late)).toBe(true);
  });

  it('gives up a read held up by a schema change after a short lock timeout (busy, 503), so it holds up little', async () => {
    await sql.query('CREATE TABLE IF NOT EXISTS locked_probe (id int)');
    await backendOf(0);
    await sql.query('BEGIN');
    await sql.query('LOCK TABLE locked_probe IN ACCESS EXCLUSIVE MODE');
    try {
      const started = Date.now();
      const error = await lanes.query('SELECT count(*) FROM locked_probe', []).catch((e: unknown) => e);
      expect(isBusyWithConcurrentUpdates(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(SHARED_LOCK_TIMEOUT_MS + 800);
    } finally {
      await sql.query('ROLLBACK');
    }
    expect((await lanes.query<{ n: string }>('SELECT count(*) AS n FROM locked_probe', []))[0].n).toBe('0');
  });

  it('fails a read still waiting for its connection when the service stops, as unavailable', async () => {
    // A server that takes connections and never answers: the connection stays "connecting".
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const waiting = new SharedConnections({ connectionString: `postgres://postgres@127.0.0.1:${port}/none` });
    try {
      const read = waiting.query('SELECT 1', []).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const stopped = waiting.onApplicationShutdown();
      // At once, not when the silent connection is dropped (a second later).
      const answer = await Promise.race([
        read,
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 300)),
      ]);
      expect(isDatabaseUnavailable(answer)).toBe(true);
      await stopped;
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
