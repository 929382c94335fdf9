import { spawn, ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { runMigrations } from '../src/database/migrate';
import { findFreePort } from '../src/common/net/free-port';
import { PROJECT_ROOT } from '../src/config/paths';
import { cpuMeter, CpuPerRequest, medianCpu, printCpu } from './cpu';
import { median, printRatio } from './measure';

export const BENCH_JWT_SECRET = 'bench-secret-that-is-long-enough-0123456789';

/** The environment of the API and bare servers a benchmark starts on its database. */
export function serverEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    JWT_SECRET: BENCH_JWT_SECRET,
    LOG_LEVEL: 'warn',
    WORKERS_IN_API: 'false',
    NODE_ENV: 'production',
  };
}

/** A server a benchmark started: where it listens, and its process id (to count its CPU). */
export interface BenchServer {
  url: string;
  pid?: number;
}

export interface ServiceAgainstBare {
  service: number;
  bare: number;
  cpu: { service: CpuPerRequest | null; bare: CpuPerRequest | null };
}

/**
 * The service against its bare yardstick: a short warm-up of each, then interleaved rounds of
 * five seconds (service, bare, service, …); the median rate of each, and the median CPU each
 * request cost its server and PostgreSQL.
 */
export async function serviceAgainstBare(
  load: (base: string, seconds: number) => Promise<number>,
  servers: { service: BenchServer; bare: BenchServer },
  rounds = 3,
): Promise<ServiceAgainstBare> {
  const rates = { service: [] as number[], bare: [] as number[] };
  const cpu = { service: [] as Array<CpuPerRequest | null>, bare: [] as Array<CpuPerRequest | null> };
  for (const server of [servers.service, servers.bare]) await load(server.url, 2);
  for (let round = 0; round < rounds; round++) {
    for (const side of ['service', 'bare'] as const) {
      const meter = cpuMeter([servers[side].pid]);
      const rate = await load(servers[side].url, 5);
      rates[side].push(rate);
      cpu[side].push(meter.perRequest(rate * 5));
    }
  }
  return {
    service: median(rates.service),
    bare: median(rates.bare),
    cpu: { service: medianCpu(cpu.service), bare: medianCpu(cpu.bare) },
  };
}

const SERVICE_LABEL = 'service (NestJS, guard, TypeORM)';

/**
 * Prints the two rates of `serviceAgainstBare` under `title`, their ratio (with its target, when
 * there is one), then their CPU; `serviceLabel` and `bareLabel` name the two sides.
 */
export function printServiceAgainstBare(
  title: string,
  bareLabel: string,
  rates: ServiceAgainstBare,
  target: number | null,
  serviceLabel = SERVICE_LABEL,
): void {
  console.log(`\n${title} (per second, median of 3 interleaved rounds)`);
  console.log(`  ${serviceLabel.padEnd(38)}${Math.round(rates.service).toString().padStart(8)}/s`);
  console.log(`  ${bareLabel.padEnd(38)}${Math.round(rates.bare).toString().padStart(8)}/s`);
  const ratio = rates.service / rates.bare;
  if (target === null) console.log(`  ratio: ${ratio.toFixed(2)}`);
  else printRatio('ratio service / bare', ratio, { atLeast: target });
  printCpu([
    [serviceLabel, rates.cpu.service],
    [bareLabel, rates.cpu.bare],
  ]);
}

/** A fresh, migrated database: on DATABASE_URL's server when set, else an embedded PostgreSQL. */
export async function benchDatabase(): Promise<{ url: string; stop(): Promise<void> }> {
  let serverUrl = process.env.DATABASE_URL;
  let stopServer = async () => undefined as void;
  if (!serverUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'payments-bench-'));
    chmodSync(dir, 0o755);
    const embedded = await startEmbeddedPostgres(dir, () => undefined);
    serverUrl = embedded.url;
    stopServer = async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const name = `payments_bench_${process.pid}`;
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await runMigrations(url.toString());
  return {
    url: url.toString(),
    async stop() {
      const c = new Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      await stopServer();
    },
  };
}

/**
 * Starts a compiled entry point (a path in this project, or an absolute one) as a child process and
 * waits for its /health/ready.
 */
export function startServer(
  script: string,
  env: Record<string, string>,
): Promise<BenchServer & { stop(): Promise<void> }> {
  // BENCH_CPU_PROF=<folder>: each server writes a V8 CPU profile there when it stops
  // (summarise one with `node dist/bench/profile-summary.js <file>`).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  return startProcess([...profile, resolve(PROJECT_ROOT, script)], env);
}

/**
 * Starts `node <args>` with the environment plus PORT/HOST on a free loopback port, and waits
 * until its /health/ready answers.
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
): Promise<BenchServer & { stop(): Promise<void>; kill(): Promise<void> }> {
  const port = await findFreePort();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${args.join(' ')} did not become ready in 60 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
    /** kill -9: the process dies at once, whatever it was doing. */
    kill: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** Sequential requests after a warm-up; the median latency in milliseconds. */
export async function medianLatency(url: string, headers: Record<string, string>, requests = 300): Promise<number> {
  const timings: number[] = [];
  for (let i = 0; i < requests + 30; i++) {
    const start = process.hrtime.bigint();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    if (i >= 30) timings.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  timings.sort((a, b) => a - b);
  return timings[Math.floor(timings.length / 2)];
}
