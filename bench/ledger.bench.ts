import autocannon from 'autocannon';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { APPEND_AUDIT_ROW } from '../src/audit/audit-log.repository';
import { POST_MOVEMENT } from '../src/virtual-accounts/ledger.repository';
import { cpuMeter, CpuPerRequest, medianCpu, printCpu } from './cpu';
import { median, printRatio } from './measure';
import { benchDatabase, serverEnv, startServer } from './support';

/**
 * Ledger throughput: internal transfers per second through HTTP (JWT, 32 connections, 100
 * virtual accounts) next to pgbench's built-in TPC-B-like transactions per second with 32
 * clients on the same PostgreSQL server, interleaved rounds, and their ratio. The scale-out
 * figure: the same 32 connections spread over two API processes on the same database. The
 * ceiling: the transfer's own statements (its audit row, and the repository's posting SQL with
 * the two outbox events) run by pgbench on the same accounts, with no HTTP and no Node.js in between.
 */
export async function ledgerBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const env = serverEnv(db.url);
  const [api, second] = [await startServer('dist/src/main.js', env), await startServer('dist/src/main.js', env)];
  const pgbench = findPgbench();
  const pgbenchDb = await createPgbenchDatabase(db.url, pgbench);
  const scriptDir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
  try {
    const { token, path, accounts, sellerId } = await setUp(api.url, db.url);
    const load = (bases: string[], seconds: number) => transferLoad(bases, path, token, accounts, seconds);
    type Side = 'one' | 'two' | 'pgbench' | 'sql';
    const rates: Record<Side, number[]> = { one: [], two: [], pgbench: [], sql: [] };
    const cpu: Record<Side, Array<CpuPerRequest | null>> = { one: [], two: [], pgbench: [], sql: [] };
    const transferScript = join(scriptDir, 'transfer.sql');
    writeFileSync(transferScript, transferSqlScript(sellerId, accounts));
    /** Runs `work` (a rate over 10 s), recording its rate and the CPU per operation of `pids` and PostgreSQL. */
    const round = async (side: Side, pids: Array<number | undefined>, work: () => Promise<number>) => {
      const meter = cpuMeter(pids);
      const rate = await work();
      rates[side].push(rate);
      cpu[side].push(meter.perRequest(rate * 10));
    };
    await load([api.url, second.url], 3); // warm-up
    for (let i = 0; i < 2; i++) {
      await round('one', [api.pid], () => load([api.url], 10));
      await round('two', [api.pid, second.pid], () => load([api.url, second.url], 10));
      if (pgbench && pgbenchDb) {
        await round('pgbench', [], async () => runPgbench(pgbench, pgbenchDb, 10));
        await round('sql', [], async () => runPgbench(pgbench, db.url, 10, transferScript));
      }
    }
    const [one, two] = [median(rates.one), median(rates.two)];
    console.log(
      '\nInternal transfers through HTTP (JWT, 32 connections, 100 accounts; median of 2 interleaved rounds)',
    );
    console.log(`  one API process                      ${Math.round(one).toString().padStart(8)}/s`);
    console.log(
      `  two API processes, same database     ${Math.round(two).toString().padStart(8)}/s   (${(two / one).toFixed(2)}x one)`,
    );
    if (rates.pgbench.length > 0) {
      const bench = median(rates.pgbench);
      console.log(`  pgbench TPC-B-like, 32 clients       ${Math.round(bench).toString().padStart(8)} tps`);
      const sql = median(rates.sql);
      console.log(`  the transfer's SQL alone, by pgbench  ${Math.round(sql).toString().padStart(8)} tps`);
      printRatio('ratio transfers (one process) / pgbench', one / bench, { atLeast: 0.5 });
      console.log(
        `  ceiling: the transfer's SQL alone / pgbench: ${(sql / bench).toFixed(2)}; ` +
          `transfers through HTTP / their SQL alone: ${(one / sql).toFixed(2)}`,
      );
    } else {
      console.log(
        "  pgbench was not found (install the PostgreSQL client tools, e.g. Debian's postgresql-15): no ratio.",
      );
    }
    printCpu([
      ['transfer, one API process', medianCpu(cpu.one)],
      ['transfer, two API processes', medianCpu(cpu.two)],
      ['pgbench transaction', medianCpu(cpu.pgbench)],
      ["the transfer's SQL by pgbench", medianCpu(cpu.sql)],
    ]);
  } finally {
    rmSync(scriptDir, { recursive: true, force: true });
    await Promise.all([api.stop(), second.stop()]);
    if (pgbenchDb) await dropDatabase(db.url, PGBENCH_DATABASE);
    await db.stop();
  }
}

/** pgbench's own database, named per run so that benchmarks of several checkouts on one server do not collide. */
const PGBENCH_DATABASE = `payments_pgbench_${process.pid}`;

/**
 * Transfers per second from 32 connections spread evenly over the API processes at `bases`.
 * The requests (random distinct accounts) are made up front, so the load generator spends
 * little CPU of the machine it shares with the service.
 */
export async function transferLoad(
  bases: string[],
  path: string,
  token: string,
  accounts: string[],
  seconds: number,
): Promise<number> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const variants = Array.from({ length: 4096 }, () => {
    const from = Math.floor(Math.random() * accounts.length);
    let to = Math.floor(Math.random() * (accounts.length - 1));
    if (to >= from) to += 1;
    return {
      path: `${path}/${accounts[from]}/transfer/`,
      body: JSON.stringify({ amount: '1.00', destination: { virtual_account: accounts[to] } }),
    };
  });
  let next = 0;
  const results = await Promise.all(
    bases.map((base) =>
      autocannon({
        url: base,
        connections: 32 / bases.length,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => ({ ...request, ...variants[next++ % variants.length], headers }),
          },
        ],
      }),
    ),
  );
  for (const result of results) {
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`transfers: ${result.non2xx} non-2xx, ${result.errors} errors`);
  }
  return results.reduce((sum, result) => sum + result.requests.average, 0);
}

export async function setUp(baseUrl: string, databaseUrl: string) {
  const call = async (method: string, path: string, body: unknown, token?: string): Promise<any> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const admin = await call('POST', '/user/register/', {
    email: 'ledger-admin@example.com',
    password: 'bench password 1',
    name: 'Bench',
  });
  const sql = new Client({ connectionString: databaseUrl });
  await sql.connect();
  await sql.query('UPDATE users SET is_superuser = true WHERE id = $1', [admin.id]);
  await sql.end();
  const adminToken = (
    await call('POST', '/user/login/', { email: 'ledger-admin@example.com', password: 'bench password 1' })
  ).access;
  const seller = await call(
    'POST',
    '/sellers/',
    { name: 'Ledger bench', document: '11444777000161', email: 'l@example.com' },
    adminToken,
  );
  await call('POST', '/user/register/', {
    email: 'ledger-operator@example.com',
    password: 'bench password 2',
    name: 'Operator',
  });
  await call(
    'POST',
    `/sellers/${seller.id}/accesses/`,
    { email: 'ledger-operator@example.com', permissions: ['virtualaccounts.view', 'virtualaccounts.operate'] },
    adminToken,
  );
  const token = (
    await call('POST', '/user/login/', { email: 'ledger-operator@example.com', password: 'bench password 2' })
  ).access;
  const base = `${baseUrl}/uniconta/seller/${seller.id}/virtualaccounts`;
  const accounts: string[] = [];
  for (let i = 0; i < 100; i++) {
    const sub = await call('POST', `/sellers/${seller.id}/subaccounts/`, { name: `Bench ${i}` }, adminToken);
    // Funded the way money really enters: a pix deposit, paid (sandbox confirmation).
    const deposit = await call(
      'POST',
      `/uniconta/seller/${seller.id}/virtualaccounts/${sub.id}/deposit/`,
      { amount: '100000.00', method: 'pix' },
      token,
    );
    await call('POST', `/sandbox/deposits/${deposit.id}/confirm/`, {}, token);
    accounts.push(sub.id);
  }
  return { token, path: new URL(base).pathname, accounts, sellerId: seller.id as string };
}

/**
 * A pgbench script of one internal transfer as the service runs it (LedgerRepository's posting
 * statement, which writes the two `virtual_account.transfer` outbox events too, in one
 * transaction) between two random distinct accounts of `accounts`: the SQL's own cost, with no
 * HTTP and no Node.js.
 */
function transferSqlScript(sellerId: string, accounts: string[]): string {
  const account = (index: string) => `('{${accounts.join(',')}}'::uuid[])[${index}]`;
  const line = (type: string, amount: number, own: string, other: string) =>
    `jsonb_build_object('account_id', ${account(own)}, 'type', '${type}', 'amount', ${amount}, ` +
    `'counterparty', jsonb_build_object('virtual_account', ${account(other)}))`;
  const parameters: Record<string, string> = {
    $1: `'transfer'`,
    $2: `'${sellerId}'`,
    $3: account(':from'),
    $4: 'NULL',
    $5: 'NULL',
    $6: `jsonb_build_array(${line('transfer_out', -1, ':from', ':to')}, ${line('transfer_in', 1, ':to', ':from')})`,
    $7: `'virtual_account.transfer'`,
    $8: `'completed'`,
  };
  // One line: pgbench reads a statement up to its end of line, and `:MI` as a variable of its
  // own (the time format's colons are written as quoted literals, the same format).
  const posting = POST_MOVEMENT.replace(/\$\d+/g, (name) => parameters[name])
    .replace(/\s+/g, ' ')
    .replaceAll('HH24:MI:SS', 'HH24":"MI":"SS');
  // The audit row the service writes with it (a person moves money out of a virtual account).
  const audit = APPEND_AUDIT_ROW.replace(
    /\$\d+/g,
    (name) =>
      ({
        $1: `'user'`,
        $2: `'${sellerId}'`,
        $3: `'virtual_account.transfer'`,
        $4: `'${sellerId}'`,
        $5: `'virtual_account'`,
        $6: account(':from'),
        $7: `jsonb_build_object('amount', '0.01', 'destination', jsonb_build_object('virtual_account', ${account(':to')}))`,
        $8: `'${sellerId}'`,
        $9: `'127.0.0.1'`,
      })[name]!,
  ).replace(/\s+/g, ' ');
  return [
    `\\set from random(1, ${accounts.length})`,
    `\\set to 1 + (:from + random(0, ${accounts.length - 2})) % ${accounts.length}`,
    'BEGIN;',
    `${audit};`,
    `${posting};`,
    'END;',
    '',
  ].join('\n');
}

function findPgbench(): string | null {
  const found = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
  if (found.status === 0) return 'pgbench';
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  for (const version of readdirSync(root).sort().reverse()) {
    const candidate = `${root}/${version}/bin/pgbench`;
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

async function createPgbenchDatabase(databaseUrl: string, pgbench: string | null): Promise<string | null> {
  if (!pgbench) return null;
  await dropDatabase(databaseUrl, PGBENCH_DATABASE);
  const admin = new Client({ connectionString: withDatabase(databaseUrl, 'postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${PGBENCH_DATABASE}`);
  await admin.end();
  const url = withDatabase(databaseUrl, PGBENCH_DATABASE);
  execFileSync(pgbench, ['-i', '-s', '10', '-q', url], { stdio: 'ignore' });
  return url;
}

/** Transactions per second of pgbench with 32 clients: its TPC-B-like script, or the script in `file`. */
function runPgbench(pgbench: string, url: string, seconds: number, file?: string): number {
  const script = file ? ['-M', 'prepared', '-f', file] : [];
  const output = execFileSync(pgbench, ['-c', '32', '-j', '2', '-T', String(seconds), '-n', ...script, url], {
    encoding: 'utf8',
  });
  const match = /tps = ([\d.]+)/.exec(output);
  if (!match) throw new Error(`pgbench printed no tps:\n${output}`);
  return Number(match[1]);
}

async function dropDatabase(databaseUrl: string, name: string): Promise<void> {
  const admin = new Client({ connectionString: withDatabase(databaseUrl, 'postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
