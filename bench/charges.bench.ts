import autocannon from 'autocannon';
import { Client } from 'pg';
import { benchDatabase, printServiceAgainstBare, serverEnv, serviceAgainstBare, startServer } from './support';
import { setUp } from './transactions.bench';

/**
 * Card charges (sandbox processor) per second through `POST …/transactions/` with 32
 * connections, next to a bare Fastify + pg handler that authenticates, checks, resolves and
 * writes the same rows (bench/minimal-charge-server.ts), interleaved rounds, and their ratio.
 */
export async function chargesBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const env = serverEnv(db.url);
  const api = await startServer('dist/src/main.js', env);
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  try {
    const { token, sellerId, ratePlanId } = await setUp(api.url, sql, ['transactions.create', 'transactions.view']);
    await sql.query('UPDATE sellers SET rate_plan_id = $1 WHERE id = $2', [ratePlanId, sellerId]);
    const path = `/unified/accounts/sellers/${sellerId}/transactions/`;
    const bare = await startServer('dist/bench/minimal-charge-server.js', env);
    try {
      const rates = await serviceAgainstBare((base, seconds) => charges(base + path, token, seconds), {
        service: api,
        bare,
      });
      printServiceAgainstBare('Card charges (sandbox), 32 connections', 'bare Fastify + pg, same rows', rates, 0.6);
    } finally {
      await bare.stop();
    }
  } finally {
    await sql.end();
    await api.stop();
    await db.stop();
  }
}

/** Card charges per second through `url` (POST …/transactions/) for `seconds`, 32 connections; any non-2xx fails. */
export async function charges(url: string, token: string, seconds: number): Promise<number> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: 32,
    duration: seconds,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      amount: '100.00',
      payment_type: 'credit',
      installments: 1,
      entry_mode: 'online',
      card: { number: '4111111111111111', holder_name: 'ANA SOUZA', exp_month: 12, exp_year: 2031, cvv: '123' },
    }),
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}
