import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { join } from 'node:path';
import { Client } from 'pg';
import { PROJECT_ROOT, SAMPLE_RATE_PLANS_FILE } from '../src/config/paths';
import { BENCH_JWT_SECRET, benchDatabase, startServer } from './support';

/**
 * Webhook delivery, measured side by side in one run:
 * (a) lag from an event's creation (its `created_at`, inside the charge's transaction) to its
 *     arrival at a local receiver, p50/p99, while card charges are made through the API at a
 *     steady rate (each charge records transaction.created and transaction.approved);
 * (b) deliveries per second draining a backlog with 1 and with 2 `npm run worker` processes,
 *     next to the rate at which the same receiver takes plain POSTs from autocannon (the ceiling).
 */
const TEST_EVENTS_PER_SECOND = 200;
/** Card charges cost far more than an event; this is about what the API sustains here next to the worker. */
const CHARGES_PER_SECOND = 20;
const LAG_SECONDS = 10;
const BACKLOG = 6_000;

export async function webhooksBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const env = {
    DATABASE_URL: db.url,
    JWT_SECRET: BENCH_JWT_SECRET,
    LOG_LEVEL: 'warn',
    WORKERS_IN_API: 'false',
    NODE_ENV: 'production',
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOKS_ENDPOINT_CONCURRENCY: '64',
    WEBHOOKS_SELLER_CONCURRENCY: '64',
  };
  const receiver = await startReceiver();
  const api = await startServer('dist/src/main.js', env);
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  const workers: ChildProcess[] = [];
  try {
    const { token, sellerId, key } = await setUp(api.url, sql);
    const endpoint = await call(api.url, '/integrations/webhooks/', key, { url: receiver.url, events: ['*'] });

    // (a) lag at a steady rate, one worker process
    workers.push(await startWorker(env));
    const charge = () =>
      call(api.url, `/unified/accounts/sellers/${sellerId}/transactions/`, token, {
        amount: '10.00',
        payment_type: 'credit',
        installments: 1,
        card: { number: '4111111111111111', holder_name: 'BENCH', exp_month: 12, exp_year: 2031, cvv: '123' },
      });
    const testEvent = () => call(api.url, `/integrations/webhooks/${endpoint.id}/test/`, key, undefined);
    for (const [label, perSecond, eventsEach, send] of [
      ['POST …/test/ (one event each)', TEST_EVENTS_PER_SECOND, 1, testEvent],
      ['card charges (created + approved, through the outbox)', CHARGES_PER_SECOND, 2, charge],
    ] as const) {
      receiver.arrivals.length = 0;
      const { offered, expected } = await steady(perSecond, LAG_SECONDS, send);
      await waitFor(() => receiver.arrivals.length >= expected * eventsEach, 120_000);
      const lags = receiver.arrivals.map((a) => a.lagMs).sort((x, y) => x - y);
      console.log(`\n(a) Delivery lag, event created → received, 1 worker: ${label}`);
      console.log(`  events/s offered   ${(offered * eventsEach).toFixed(0)}   (${lags.length} delivered)`);
      console.log(`  p50                ${percentile(lags, 0.5).toFixed(1)} ms   (target < 200 ms)`);
      console.log(`  p99                ${percentile(lags, 0.99).toFixed(1)} ms   (target < 1000 ms)`);
    }

    // (b) throughput draining a backlog
    for (const w of workers.splice(0)) await stopWorker(w);
    const ceiling = await plainPostRate(receiver.url);
    const rates: Record<number, number> = {};
    for (const count of [1, 2]) {
      await sql.query(
        `INSERT INTO outbox_events (type, seller_id, data)
         SELECT 'transaction.created', $1, jsonb_build_object('id', gen_random_uuid(), 'amount', '10.00', 'n', n)
         FROM generate_series(1, $2) n`,
        [sellerId, BACKLOG],
      );
      receiver.arrivals.length = 0;
      for (let i = 0; i < count; i++) workers.push(await startWorker(env));
      const ready = Date.now();
      await waitFor(() => receiver.arrivals.length >= BACKLOG, 120_000);
      rates[count] = BACKLOG / ((Date.now() - ready) / 1000);
      for (const w of workers.splice(0)) await stopWorker(w);
    }
    console.log(`\n(b) Deliveries per second draining ${BACKLOG} events to one endpoint`);
    console.log(`  1 worker process       ${Math.round(rates[1]).toString().padStart(8)}/s`);
    console.log(`  2 worker processes     ${Math.round(rates[2]).toString().padStart(8)}/s`);
    console.log(`  receiver ceiling       ${Math.round(ceiling).toString().padStart(8)}/s   (autocannon, plain POSTs)`);
    console.log(
      `  ratio 2 workers / ceiling: ${(rates[2] / ceiling).toFixed(2)}   (target >= 500/s or >= 0.5 of the ceiling)`,
    );
  } finally {
    for (const w of workers) await stopWorker(w);
    await sql.end();
    await api.stop();
    await receiver.stop();
    await db.stop();
  }
}

/** Calls `send` at a steady rate for `seconds`; answers the rate actually achieved and the calls made. */
async function steady(perSecond: number, seconds: number, send: () => Promise<unknown>) {
  const calls: Array<Promise<unknown>> = [];
  const failures: unknown[] = [];
  const started = Date.now();
  for (let i = 0; i < perSecond * seconds; i++) {
    const due = started + (i * 1000) / perSecond;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    calls.push(send().catch((error: unknown) => failures.push(error)));
  }
  await Promise.all(calls);
  if (failures.length)
    console.log(`  ${failures.length} of ${calls.length} calls failed, e.g. ${String(failures[0]).slice(0, 160)}`);
  return { offered: calls.length / ((Date.now() - started) / 1000), expected: calls.length - failures.length };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A receiver that answers 204 and notes each webhook's lag from its `created_at`. */
async function startReceiver(): Promise<{
  url: string;
  arrivals: Array<{ lagMs: number }>;
  stop(): Promise<void>;
}> {
  const arrivals: Array<{ lagMs: number }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      if (req.headers['webhook-id']) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
        arrivals.push({ lagMs: now - Date.parse(body.created_at) });
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Plain POSTs of a webhook-sized body: the receiver's own ceiling on this machine. */
async function plainPostRate(url: string): Promise<number> {
  const body = JSON.stringify({ id: '00000000-0000-4000-8000-000000000000', type: 'transaction.created', data: {} });
  const result = await autocannon({
    url,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
    connections: 64,
    duration: 5,
  });
  return result.requests.average;
}

async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/src/worker.js')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Worker started')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  child.stdout!.resume();
  return child;
}

function stopWorker(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function call(baseUrl: string, path: string, token: string | undefined, body: unknown): Promise<any> {
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A superuser, a seller on the sample rate plan and its API key, through the API. */
async function setUp(baseUrl: string, sql: Client) {
  const sample = JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8'))[0];
  const { rows } = await sql.query(
    `INSERT INTO rate_plans (external_id, name, fees) VALUES ($1, $2, $3) RETURNING id`,
    [sample.external_id, sample.name, JSON.stringify(sample.fees)],
  );
  const admin = await call(baseUrl, '/user/register/', undefined, {
    email: 'bench-admin@example.com',
    password: 'bench password 1',
    name: 'Bench',
  });
  await sql.query('UPDATE users SET is_superuser = true WHERE id = $1', [admin.id]);
  const token = (
    await call(baseUrl, '/user/login/', undefined, { email: 'bench-admin@example.com', password: 'bench password 1' })
  ).access as string;
  const seller = await call(baseUrl, '/sellers/', token, {
    name: 'Bench seller',
    document: '11222333000181',
    email: 'bench@example.com',
  });
  const patched = await fetch(`${baseUrl}/sellers/${seller.id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ rate_plan: rows[0].id }),
  });
  if (!patched.ok) throw new Error(`seller rate plan: ${patched.status} ${await patched.text()}`);
  const key = await call(baseUrl, `/integrations/apikeys/${seller.id}/apikeys/`, token, {
    label: 'bench',
    description: '',
  });
  return { token, sellerId: seller.id as string, key: key.key as string };
}
