import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { charges } from './charges.bench';
import { printCpu } from './cpu';
import { setUp as setUpLedger, transferLoad } from './ledger.bench';
import { BenchServer, benchDatabase, serverEnv, serviceAgainstBare, startServer } from './support';
import { load, setUp } from './transactions.bench';

/**
 * `BENCH_BASELINE=<folder> npm run bench -- baseline`: this build of the service against the
 * build in another checkout (built with `npm run build`; its migrations a prefix of these), both
 * on the same fresh database, in interleaved rounds: the authenticated detail GET, card charges
 * and internal transfers between virtual accounts, 32 connections. Says what a change bought, side by side in one run. With
 * BENCH_CPU_PROF both servers write profiles.
 */
export async function baselineBenchmark(): Promise<void> {
  const folder = process.env.BENCH_BASELINE;
  if (!folder) {
    console.log('  skipped: set BENCH_BASELINE to a checkout of the service built with `npm run build`');
    return;
  }
  const baselineMain = join(resolve(folder), 'dist/src/main.js');
  if (!existsSync(baselineMain))
    throw new Error(`BENCH_BASELINE: ${baselineMain} does not exist (run npm run build there)`);
  const db = await benchDatabase();
  try {
    const env = serverEnv(db.url);
    const current = await startServer('dist/src/main.js', env);
    try {
      const baseline = await startServer(baselineMain, env);
      try {
        await compare(db.url, { service: current, bare: baseline }, folder);
      } finally {
        await baseline.stop();
      }
    } finally {
      await current.stop();
    }
  } finally {
    await db.stop();
  }
}

/** Interleaved rounds of detail GETs, then of charges, then of transfers: `servers.service` is this build, `servers.bare` the baseline. */
async function compare(databaseUrl: string, servers: { service: BenchServer; bare: BenchServer }, folder: string) {
  const sql = new Client({ connectionString: databaseUrl });
  await sql.connect();
  try {
    const { token, sellerId, ratePlanId } = await setUp(servers.service.url, sql, [
      'transactions.create',
      'transactions.view',
    ]);
    await sql.query('UPDATE sellers SET rate_plan_id = $1 WHERE id = $2', [ratePlanId, sellerId]);
    const chargesPath = `/unified/accounts/sellers/${sellerId}/transactions/`;
    await charges(servers.service.url + chargesPath, token, 2); // transactions to read
    const { rows } = await sql.query('SELECT id FROM transactions WHERE seller_id = $1 LIMIT 1', [sellerId]);
    const detailPath = `${chargesPath}${rows[0].id}/`;
    const headers = { authorization: `Bearer ${token}` };
    const ledger = await setUpLedger(servers.service.url, databaseUrl);
    const rounds: Array<[string, (base: string, seconds: number) => Promise<number>]> = [
      ['Authenticated detail GET', (base, seconds) => load(base + detailPath, headers, seconds)],
      ['Card charges (sandbox)', (base, seconds) => charges(base + chargesPath, token, seconds)],
      [
        'Internal transfers between virtual accounts',
        (base, seconds) => transferLoad([base], ledger.path, ledger.token, ledger.accounts, seconds),
      ],
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
  }
}
