import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { charges } from './charges.bench';
import { printCpu } from './cpu';
import { benchDatabase, serverEnv, serviceAgainstBare, startProcess, startServer } from './support';
import { load, setUp } from './transactions.bench';

/**
 * `BENCH_BASELINE=<folder> npm run bench -- baseline`: this build of the service against the
 * build in another checkout (built with `npm run build`; its migrations a prefix of these), both
 * on the same fresh database, in interleaved rounds: the authenticated detail GET and card
 * charges, 32 connections. Says what a change bought, side by side in one run.
 */
export async function baselineBenchmark(): Promise<void> {
  const folder = process.env.BENCH_BASELINE;
  const baselineMain = folder ? join(resolve(folder), 'dist/src/main.js') : undefined;
  if (!baselineMain || !existsSync(baselineMain)) {
    console.log('  skipped: set BENCH_BASELINE to a checkout of the service built with `npm run build`');
    return;
  }
  const db = await benchDatabase();
  const env = serverEnv(db.url);
  const current = await startServer('dist/src/main.js', env);
  const baseline = await startProcess([baselineMain], env);
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  try {
    const { token, sellerId, ratePlanId } = await setUp(current.url, sql, ['transactions.create', 'transactions.view']);
    await sql.query('UPDATE sellers SET rate_plan_id = $1 WHERE id = $2', [ratePlanId, sellerId]);
    const chargesPath = `/unified/accounts/sellers/${sellerId}/transactions/`;
    await charges(current.url + chargesPath, token, 2); // transactions to read
    const { rows } = await sql.query('SELECT id FROM transactions WHERE seller_id = $1 LIMIT 1', [sellerId]);
    const detailPath = `${chargesPath}${rows[0].id}/`;
    const headers = { authorization: `Bearer ${token}` };
    const servers = { service: current, bare: baseline };
    const rounds: Array<[string, (base: string, seconds: number) => Promise<number>]> = [
      ['Authenticated detail GET', (base, seconds) => load(base + detailPath, headers, seconds)],
      ['Card charges (sandbox)', (base, seconds) => charges(base + chargesPath, token, seconds)],
    ];
    for (const [title, run] of rounds) {
      const measured = await serviceAgainstBare(run, servers);
      console.log(`\n${title}, 32 connections (per second, median of 3 interleaved rounds)`);
      console.log(`  ${'this build'.padEnd(38)}${Math.round(measured.service).toString().padStart(8)}/s`);
      console.log(`  ${`baseline (${folder})`.padEnd(38)}${Math.round(measured.bare).toString().padStart(8)}/s`);
      console.log(`  ratio this build / baseline: ${(measured.service / measured.bare).toFixed(2)}`);
      printCpu([
        ['this build', measured.cpu.service],
        ['baseline', measured.cpu.bare],
      ]);
    }
  } finally {
    await sql.end();
    await current.stop();
    await baseline.stop();
    await db.stop();
  }
}
