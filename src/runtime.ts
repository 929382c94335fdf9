import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppConfig, ConfigError, Environment, readEnvironment, toAppConfig } from './config/config';
import { DataDirInUseError, lockDataDir } from './database/data-dir-lock';
import { runningEmbeddedUrl, startEmbeddedPostgres } from './database/embedded-postgres';
import { runMigrations } from './database/migrate';
import { waitForDatabase } from './database/wait-for-database';

export type ProcessRole = 'api' | 'worker' | 'cli';

export interface Runtime {
  config: AppConfig;
  /** Migrations this start-up applied, oldest first. */
  migrationsApplied: string[];
  /** Releases what start-up acquired: the embedded database and the data-folder lock. */
  release(): Promise<void>;
}

/**
 * Everything a process does before Nest starts: validate the environment, find or start
 * the database, apply pending migrations and settle the JWT secret.
 *
 * Without DATABASE_URL the embedded PostgreSQL under DATA_DIR is used. The API owns it and
 * refuses to start twice on one folder; a worker or CLI command joins the cluster an API
 * process of the same folder is running, or starts it itself.
 */
export async function prepareRuntime(
  role: ProcessRole,
  log: (message: string) => void,
  source: NodeJS.ProcessEnv = process.env,
): Promise<Runtime> {
  const env = readEnvironment(source);
  // The folder keeps the embedded database and the generated JWT secret, when either is used.
  if (!env.DATABASE_URL || !env.JWT_SECRET) checkDataDir(env.DATA_DIR);
  const releases: Array<() => Promise<void> | void> = [];
  const release = async () => {
    for (const step of releases.reverse()) await step();
  };
  try {
    const databaseUrl = await resolveDatabase(env, role, log, releases);
    const migrationsApplied = await runMigrations(databaseUrl);
    const jwtSecret = env.JWT_SECRET ?? readOrCreateJwtSecret(env.DATA_DIR);
    return { config: toAppConfig(env, { databaseUrl, jwtSecret }), migrationsApplied, release };
  } catch (error) {
    await release();
    throw error;
  }
}

async function resolveDatabase(
  env: Environment,
  role: ProcessRole,
  log: (message: string) => void,
  releases: Array<() => Promise<void> | void>,
): Promise<string> {
  if (env.DATABASE_URL) {
    await waitForDatabase(env.DATABASE_URL, env.DATABASE_WAIT_TIMEOUT * 1000, log);
    return env.DATABASE_URL;
  }
  try {
    releases.push(lockDataDir(env.DATA_DIR));
  } catch (error) {
    const joined = error instanceof DataDirInUseError && role !== 'api' ? runningEmbeddedUrl(env.DATA_DIR) : undefined;
    if (!joined) throw error;
    log('Joining the embedded PostgreSQL of the running instance');
    return joined;
  }
  const embedded = await startEmbeddedPostgres(env.DATA_DIR, log);
  releases.push(() => embedded.stop());
  return embedded.url;
}

/** DATA_DIR is a folder this process can write to (created when missing), or start-up stops naming it. */
function checkDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
  } catch (error) {
    throw new ConfigError([
      `DATA_DIR must be a folder this process can write to (${dataDir}: ${(error as Error).message})`,
    ]);
  }
}

function readOrCreateJwtSecret(dataDir: string): string {
  const root = resolve(dataDir);
  const file = join(root, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(root, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
