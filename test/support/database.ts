import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * Databases of the test run. The global setup prepares a migrated template database once;
 * each test file copies it (CREATE DATABASE … TEMPLATE) so files never share state and can
 * run in parallel.
 */
export const TEMPLATE_ENV = 'PAYMENTS_TEST_TEMPLATE_URL';

export function templateUrl(): string {
  const url = process.env[TEMPLATE_ENV];
  if (!url) throw new Error(`${TEMPLATE_ENV} is not set: run the tests through jest (global setup)`);
  return url;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database with the whole schema, for one test file. */
export async function createTestDatabase(): Promise<string> {
  const template = templateUrl();
  const templateName = new URL(template).pathname.slice(1);
  const name = `${testDatabasePrefix(templateName)}${randomBytes(6).toString('hex')}`;
  await adminQuery(template, `CREATE DATABASE ${name} TEMPLATE ${templateName}`);
  return withDatabase(template, name);
}

export async function dropTestDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** Test databases of one run share a prefix derived from its template: payments_t_<run>_. */
export function testDatabasePrefix(templateName: string): string {
  return `${templateName.replace('payments_tmpl_', 'payments_t_')}_`;
}
