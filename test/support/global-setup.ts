import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { runMigrations } from '../../src/database/migrate';
import { adminQuery, TEMPLATE_ENV, withDatabase } from './database';

declare global {
  var __PAYMENTS_TEST_DB__: { stop(): Promise<void>; templateUrl: string; dataDir?: string } | undefined;
}

/**
 * Starts PostgreSQL once for the run (embedded, or DATABASE_URL's server when set) and builds
 * the template database every test file copies: migrations applied, job-queue schema installed.
 */
export default async function globalSetup(): Promise<void> {
  let serverUrl = process.env.DATABASE_URL;
  let stop = async (): Promise<void> => undefined;
  let dataDir: string | undefined;
  if (!serverUrl) {
    dataDir = mkdtempSync(join(tmpdir(), 'payments-test-'));
    chmodSync(dataDir, 0o755); // the cluster runs as the "postgres" user when tests run as root
    const embedded = await startEmbeddedPostgres(dataDir, () => undefined);
    serverUrl = embedded.url;
    stop = embedded.stop;
  }
  const templateName = `payments_tmpl_${process.pid}`;
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${templateName}`);
  await adminQuery(serverUrl, `CREATE DATABASE ${templateName}`);
  const templateUrl = withDatabase(serverUrl, templateName);
  await runMigrations(templateUrl);
  installJobQueueSchema(templateUrl);

  process.env[TEMPLATE_ENV] = templateUrl;
  globalThis.__PAYMENTS_TEST_DB__ = { stop, templateUrl, dataDir };
}

/**
 * Installs pg-boss's schema once in the template, so each test file's app starts its queue
 * at once. Run in a child Node process: the setup's transform hook must not touch pg-boss.
 */
function installJobQueueSchema(databaseUrl: string): void {
  const script = `
    const { PgBoss } = require('pg-boss');
    const boss = new PgBoss({ connectionString: process.env.URL, schedule: false, supervise: false });
    boss.on('error', () => {});
    boss.start().then(() => boss.stop({ graceful: false, close: true })).then(
      () => process.exit(0),
      (e) => { console.error(e); process.exit(1); });`;
  execFileSync(process.execPath, ['-e', script], { env: { ...process.env, URL: databaseUrl }, stdio: 'inherit' });
}
