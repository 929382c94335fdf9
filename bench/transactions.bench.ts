import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { SAMPLE_RATE_PLANS_FILE } from '../src/config/paths';
import { encodeCursor } from '../src/common/pagination/pagination';
import { printRatio } from './measure';
import {
  benchDatabase,
  medianLatency,
  printServiceAgainstBare,
  serverEnv,
  serviceAgainstBare,
  startServer,
} from './support';

/**
 * Unified transactions:
 * (a) p50 latency of a list page (the first page, one deep in the list, and the first page of
 *     one day 300 days back) with 10,000 and with 1,000,000 transactions of one seller, created
 *     over the past year: keyset pagination and the list's indexes keep the cost flat;
 * (b) requests per second of the authenticated detail GET against a bare Fastify + pg handler
 *     running the same queries, on the same data, 32 connections, interleaved rounds;
 * (c) what the shared connections (SharedConnections) gain: the bare handler with them against the
 *     bare handler taking a pooled connection for each read.
 * Both servers run as child processes; this process only sends requests.
 */
export async function transactionsBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const env = serverEnv(db.url);
  const api = await startServer('dist/src/main.js', env);
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  try {
    const { token, sellerId, ratePlanId } = await setUp(api.url, sql);
    const headers = { authorization: `Bearer ${token}` };
    const listUrl = `${api.url}/unified/accounts/sellers/${sellerId}/transactions/?limit=20`;

    const pageLatency = async () => {
      const { rows } = await sql.query(
        'SELECT max(seq)::text AS max, min(seq)::text AS min FROM transactions WHERE seller_id = $1',
        [sellerId],
      );
      const middle = ((BigInt(rows[0].max) + BigInt(rows[0].min)) / 2n).toString();
      const day = 86_400_000;
      const range = (daysBack: number) => new Date(Date.now() - daysBack * day).toISOString();
      return {
        first: await medianLatency(listUrl, headers),
        deep: await medianLatency(`${listUrl}&cursor=${encodeCursor(middle, true)}`, headers),
        day: await medianLatency(`${listUrl}&created_after=${range(300)}&created_before=${range(299)}`, headers),
      };
    };

    await insertTransactions(sql, sellerId, ratePlanId, 10_000);
    const small = await pageLatency();
    process.stdout.write('  loading 1,000,000 transactions… ');
    const started = Date.now();
    await insertTransactions(sql, sellerId, ratePlanId, 990_000);
    console.log(`${((Date.now() - started) / 1000).toFixed(0)} s`);
    const large = await pageLatency();

    console.log('\n(a) List page p50 latency, one seller (ms)');
    console.log(`  ${'page'.padEnd(26)}${'10,000'.padStart(10)}${'1,000,000'.padStart(12)}${'ratio'.padStart(8)}`);
    for (const [name, key] of [
      ['first page', 'first'],
      ['page deep in the list', 'deep'],
      ['a day 300 days back', 'day'],
    ] as const) {
      console.log(
        `  ${name.padEnd(26)}${small[key].toFixed(2).padStart(10)}${large[key].toFixed(2).padStart(12)}${(large[key] / small[key]).toFixed(2).padStart(8)}`,
      );
    }
    for (const key of ['first', 'deep', 'day'] as const) {
      printRatio(`ratio 1,000,000 / 10,000 (${key} page)`, large[key] / small[key], { atMost: 1.5 });
    }

    const { rows } = await sql.query(
      'SELECT id FROM transactions WHERE seller_id = $1 ORDER BY seq DESC OFFSET 500000 LIMIT 1',
      [sellerId],
    );
    const detailPath = `/unified/accounts/sellers/${sellerId}/transactions/${rows[0].id}/`;
    const minimal = await startServer('dist/bench/minimal-detail-server.js', env);
    try {
      const rates = await serviceAgainstBare((base, seconds) => load(base + detailPath, headers, seconds), {
        service: api,
        bare: minimal,
      });
      printServiceAgainstBare(
        '(b) Authenticated detail GET, 32 connections',
        'bare Fastify + pg, same queries',
        rates,
        0.8,
      );
      const pooled = await startServer('dist/bench/minimal-detail-server.js', { ...env, DETAIL_READS: 'pool' });
      try {
        const gain = await serviceAgainstBare((base, seconds) => load(base + detailPath, headers, seconds), {
          service: minimal,
          bare: pooled,
        });
        printServiceAgainstBare(
          '(c) Shared connections, bare detail GET, 32 connections',
          'a pooled connection per read',
          gain,
          null,
          'shared connections',
        );
      } finally {
        await pooled.stop();
      }
    } finally {
      await minimal.stop();
    }
  } finally {
    await sql.end();
    await api.stop();
    await db.stop();
  }
}

export async function load(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  const result = await autocannon({ url, headers, connections: 32, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

/** A user with `permissions` on a seller that has the sample rate plan, through the API. */
export async function setUp(baseUrl: string, sql: Client, permissions = ['transactions.view']) {
  const post = async (path: string, body: unknown, token?: string): Promise<any> => {
    const res = await fetch(baseUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const sample = JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8'))[0];
  const { rows } = await sql.query(
    `INSERT INTO rate_plans (external_id, name, fees) VALUES ($1, $2, $3) RETURNING id`,
    [sample.external_id, sample.name, JSON.stringify(sample.fees)],
  );
  const admin = await post('/user/register/', {
    email: 'bench-admin@example.com',
    password: 'bench password 1',
    name: 'Bench',
  });
  await sql.query('UPDATE users SET is_superuser = true WHERE id = $1', [admin.id]);
  const adminToken = (await post('/user/login/', { email: 'bench-admin@example.com', password: 'bench password 1' }))
    .access;
  const seller = await post(
    '/sellers/',
    { name: 'Bench seller', document: '11222333000181', email: 'bench@example.com' },
    adminToken,
  );
  await post('/user/register/', { email: 'bench-reader@example.com', password: 'bench password 2', name: 'Reader' });
  await post(`/sellers/${seller.id}/accesses/`, { email: 'bench-reader@example.com', permissions }, adminToken);
  const token = (await post('/user/login/', { email: 'bench-reader@example.com', password: 'bench password 2' }))
    .access;
  return { token, sellerId: seller.id as string, ratePlanId: rows[0].id as string };
}

/** `count` approved charges of the seller, created over the past year (each batch spread over all of it). */
async function insertTransactions(sql: Client, sellerId: string, ratePlanId: string, count: number): Promise<void> {
  for (let done = 0; done < count; done += 100_000) {
    await sql.query(
      `INSERT INTO transactions (seller_id, amount, payment_type, installments, card_brand, card_last4, entry_mode, status,
         source, rate_plan_id, fee_percentage, fee_fixed, fee_amount, developer_amount, participants_amount, seller_net,
         processor, processor_reference, approved_at, created_at)
       SELECT $1, 10000, 'credit', 1, 'Visa', '1111', 'online', 'approved', 'api', $2, 29900, 50, 349, 0, 0, 9651,
         'sandbox', 'bench', now(), now() - (g::double precision / $3) * interval '365 days'
       FROM generate_series(1, $3) g`,
      [sellerId, ratePlanId, Math.min(100_000, count - done)],
    );
  }
  await sql.query('VACUUM ANALYZE transactions');
}
