import { NestFactory } from '@nestjs/core';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { AppModule } from '../src/app.module';
import { PinoNestLogger, createLogger } from '../src/common/logging/logger';
import { readEnvironment, toAppConfig } from '../src/config/config';
import { PROJECT_ROOT, SAMPLE_RATE_PLANS_FILE } from '../src/config/paths';
import { HttpMetrics } from '../src/metrics/http-metrics';
import { RatePlansSyncService } from '../src/plans/rate-plans-sync.service';
import { SellersService } from '../src/sellers/sellers.service';
import { TransactionsService } from '../src/transactions/transactions.service';
import { BENCH_JWT_SECRET, benchDatabase } from './support';

/**
 * Subscription renewals (`npm run bench -- renewals`): BENCH_RENEWALS subscriptions (default
 * 100,000) all due at once, renewed by `subscriptions:renew` processes, with 1 and then 2 workers
 * (each a process, as in production), next to the ceiling: the same number of the same card-on-file
 * charges through the transactions service with no subscription logic, by as many processes.
 * Rates come from the charges' own timestamps (first to last), so process start-up is left out.
 * Double charges (a subscription paid twice for a period) are counted in SQL and must be 0.
 */
export async function renewalsBenchmark(): Promise<void> {
  const count = Number(process.env.BENCH_RENEWALS ?? 100_000);
  const db = await benchDatabase();
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  const env = { DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET, LOG_LEVEL: 'error', NODE_ENV: 'production' };
  try {
    const { sellerId, planId, card, anchor } = await setUp(db.url, sql, count);
    const at = (months: number) =>
      new Date(Date.UTC(anchor.getUTCFullYear(), anchor.getUTCMonth() + months, 15)).toISOString();

    const renew = async (workers: number, period: number) => {
      await Promise.all(
        Array.from({ length: workers }, () =>
          run(['dist/src/cli.js', 'subscriptions:renew', '--now', at(period)], env),
        ),
      );
      return rateOf(
        sql,
        `FROM transactions t JOIN subscription_charges c ON c.transaction_id = t.id WHERE c.period = ${period}`,
      );
    };
    const ceiling = async (workers: number, reference: string) => {
      await Promise.all(
        Array.from({ length: workers }, (_, i) =>
          run(['dist/bench/renewals-ceiling.js'], {
            ...env,
            BENCH_SELLER: sellerId,
            BENCH_CARD: JSON.stringify(card),
            BENCH_COUNT: String(Math.floor(count / workers) + (i < count % workers ? 1 : 0)),
            BENCH_REFERENCE: reference,
          }),
        ),
      );
      return rateOf(sql, `FROM transactions t WHERE t.reference = '${reference}'`);
    };

    console.log(`  ${count.toLocaleString('en')} subscriptions due; renewals per second (charges' first to last)`);
    const rows: Array<[string, number, number]> = [];
    for (const workers of [1, 2]) {
      const renewed = await renew(workers, workers);
      const raw = await ceiling(workers, `ceiling-${workers}`);
      rows.push([`${workers} worker${workers > 1 ? 's' : ''}`, renewed.rate, raw.rate]);
      if (renewed.count !== count) throw new Error(`${workers} workers renewed ${renewed.count} of ${count}`);
    }
    const doubles = await sql.query(
      `SELECT count(*)::int AS n FROM (
         SELECT c.subscription_id, c.period FROM subscription_charges c JOIN transactions t ON t.id = c.transaction_id
         JOIN subscriptions s ON s.id = c.subscription_id
         WHERE s.plan_id = $1 AND t.status = 'approved' GROUP BY 1, 2 HAVING count(*) > 1) d`,
      [planId],
    );
    console.log(`\n  ${''.padEnd(12)}${'renewals/s'.padStart(12)}${'ceiling/s'.padStart(12)}${'ratio'.padStart(8)}`);
    for (const [name, renewed, raw] of rows) {
      console.log(
        `  ${name.padEnd(12)}${renewed.toFixed(0).padStart(12)}${raw.toFixed(0).padStart(12)}${(renewed / raw).toFixed(2).padStart(8)}`,
      );
    }
    console.log(`  double charges: ${doubles.rows[0].n}   (must be 0)`);
    console.log('  target: ratio >= 0.5');
  } finally {
    await sql.end();
    await db.stop();
  }
}

async function rateOf(sql: Client, from: string): Promise<{ count: number; rate: number }> {
  const { rows } = await sql.query(
    `SELECT count(*)::int AS n, extract(epoch FROM max(t.updated_at) - min(t.created_at))::float AS seconds ${from}`,
  );
  return { count: rows[0].n, rate: rows[0].n / Math.max(rows[0].seconds, 0.001) };
}

function run(args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      args.map((a, i) => (i === 0 ? join(PROJECT_ROOT, a) : a)),
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });
}

/** A seller on the sample rate plan, a monthly plan and `count` credit subscriptions with one card token, all due. */
async function setUp(databaseUrl: string, sql: Client, count: number) {
  const config = toAppConfig(
    readEnvironment({ NODE_ENV: 'production', LOG_LEVEL: 'error', JWT_SECRET: BENCH_JWT_SECRET }),
    {
      databaseUrl,
      jwtSecret: BENCH_JWT_SECRET,
    },
  );
  const app = await NestFactory.createApplicationContext(
    AppModule.register({ config, metrics: new HttpMetrics(), runWorkers: false }),
    { logger: new PinoNestLogger(createLogger('error')) },
  );
  try {
    await app.get(RatePlansSyncService).sync(JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8')));
    const { rows: rates } = await sql.query(`SELECT id FROM rate_plans WHERE active ORDER BY name LIMIT 1`);
    const seller = await app
      .get(SellersService)
      .create({ name: 'Bench seller', document: '11222333000181', email: 'b@example.com' });
    await sql.query('UPDATE sellers SET rate_plan_id = $1 WHERE id = $2', [rates[0].id, seller.id]);
    const card = await app
      .get(TransactionsService)
      .tokenizeCard({ number: '4111111111111111', holder_name: 'BENCH', exp_month: 12, exp_year: 2099, cvv: '123' });
    const { rows: plans } = await sql.query(
      `INSERT INTO subscription_plans (seller_id, name, amount, interval, interval_count, trial_days, payment_types)
       VALUES ($1, 'Bench plan', 4990, 'month', 1, 0, ARRAY['credit']) RETURNING id`,
      [seller.id],
    );
    const anchor = new Date(Date.UTC(new Date().getUTCFullYear() + 1, 0, 15));
    await sql.query(
      `INSERT INTO subscriptions (id, plan_id, seller_id, status, name, email, document, payment_type, card_token,
         card_brand, card_last4, card_exp_month, card_exp_year, manage_token_hash, anchor_at, next_period,
         current_period_start, current_period_end, next_charge_at)
       SELECT gen_random_uuid(), $1, $2, 'active', 'Bench Subscriber', 'sub' || i || '@example.com', '52998224725',
         'credit', $3, 'Visa', '1111', 12, 2099, md5(i::text || random()::text), $4, 1, $4,
         $4::timestamptz + interval '1 month', $4::timestamptz + interval '1 month'
       FROM generate_series(1, $5) AS i`,
      [plans[0].id, seller.id, card.token, anchor, count],
    );
    await sql.query('VACUUM ANALYZE subscriptions');
    return { sellerId: seller.id, planId: plans[0].id as string, card, anchor };
  } finally {
    await app.close();
  }
}
