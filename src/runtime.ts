import { randomBytes } from 'node:crypto';
import { accessSync, constants, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AppConfig, ConfigError, Environment, isStrongSecret, readEnvironment, toAppConfig } from './config/config';
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

/**
 * The secret kept in DATA_DIR/jwt-secret, made on first start. A new one is written whole under
 * a name of its own and then linked into place, which fails if the file exists: two processes
 * starting at once end with the same secret, and a crash never leaves half of one (where the
 * file system has no links, it is created exclusively instead). A file holding no usable secret
 * (emptied, edited by hand) stops start-up rather than sign tokens with it.
 */
function readOrCreateJwtSecret(dataDir: string): string {
  const root = resolve(dataDir);
  const file = join(root, 'jwt-secret');
  const secret = readSecretFile(file) ?? createSecretFile(root, file);
  if (!isStrongSecret(secret)) {
    throw new ConfigError([
      `${file} must hold a secret of at least 32 characters other than spaces; delete it to have a new one made (tokens signed with the old one stop working), or set JWT_SECRET`,
    ]);
  }
  return secret;
}

/** The file's secret, or null when there is no file yet. */
function readSecretFile(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function createSecretFile(root: string, file: string): string {
  mkdirSync(root, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  const fresh = join(root, `.jwt-secret.${randomBytes(8).toString('hex')}.tmp`);
  writeFileSync(fresh, secret, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(fresh, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') {
      // No links here (some network and container file systems): created exclusively instead.
      try {
        writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
      } catch (created) {
        if ((created as NodeJS.ErrnoException).code !== 'EEXIST') throw created;
      }
    }
  } finally {
    rmSync(fresh, { force: true });
  }
  return readSecretFile(file) ?? secret;
}
