import { transformSync } from '@swc/core';
import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { DataSource, MigrationInterface } from 'typeorm';
import { migrations } from '../../migrations';
import { PROJECT_ROOT } from '../../src/config/paths';
import { adminQuery, templateUrl, withDatabase } from '../support/database';

/**
 * Migrations 1763700300000 (transactions) and 1763700400000 (ledger) were edited after they
 * landed, so a database may have been made by any of their versions. Whichever it was, the
 * later migrations must bring it to exactly the schema a fresh database gets: each version in
 * the git history is applied to a database of its own (with a deposit and a payment posted the
 * old way), then the rest, and the catalogs are compared.
 */
const EDITED = ['migrations/1763700300000-transactions.ts', 'migrations/1763700400000-ledger.ts'];

const git = (...args: string[]) => execFileSync('git', args, { cwd: PROJECT_ROOT, encoding: 'utf8' });

/** Every distinct content the file had in the history, oldest first. */
function versions(path: string): Array<{ commit: string; source: string }> {
  const commits = git('log', '--format=%H', '--reverse', '--', path).split('\n').filter(Boolean);
  if (commits.length === 0) throw new Error(`no git history for ${path}: the test needs a full clone`);
  const seen = new Set<string>();
  return commits
    .map((commit) => ({ commit, source: git('show', `${commit}:${path}`) }))
    .filter(({ source }) => !seen.has(source) && Boolean(seen.add(source)));
}

/** Compiles an old migration file and answers its class. */
function load(source: string): new () => MigrationInterface {
  const { code } = transformSync(source, {
    jsc: { parser: { syntax: 'typescript', decorators: true }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  const module = { exports: {} as Record<string, new () => MigrationInterface> };
  new Function('require', 'module', 'exports', code)(require, module, module.exports);
  return Object.values(module.exports)[0];
}

const OLD_DATA = `
  INSERT INTO sellers (id, name, document, email)
    VALUES ('00000000-0000-4000-8000-000000000001', 'Old build', '11222333000181', 'old@example.com');
  INSERT INTO ledger_accounts (id, kind, seller_id, name)
    VALUES ('00000000-0000-4000-8000-000000000002', 'virtual', '00000000-0000-4000-8000-000000000001', 'VA');
  UPDATE ledger_accounts SET balance = 10000, last_line = 1 WHERE id = '00000000-0000-4000-8000-000000000002';
  UPDATE ledger_accounts SET balance = 7000, last_line = 2 WHERE id = '00000000-0000-4000-8000-000000000002';
  WITH e AS (INSERT INTO journal_entries (id, kind, seller_id, description)
             VALUES ('00000000-0000-4000-8000-000000000003', 'deposit', '00000000-0000-4000-8000-000000000001', 'Old deposit')
             RETURNING id)
  INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after)
    SELECT e.id, '00000000-0000-4000-8000-000000000002', 'deposit', 10000, 1, 10000 FROM e
    UNION ALL SELECT e.id, (SELECT id FROM ledger_accounts WHERE code = 'external:deposits'), 'external', -10000, NULL, NULL FROM e;
  WITH e AS (INSERT INTO journal_entries (id, kind, seller_id)
             VALUES ('00000000-0000-4000-8000-000000000004', 'payment', '00000000-0000-4000-8000-000000000001')
             RETURNING id)
  INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after, counterparty)
    SELECT e.id, '00000000-0000-4000-8000-000000000002', 'payment', -3000, 2, 7000, '{"barcode": "1"}'::jsonb FROM e
    UNION ALL SELECT e.id, (SELECT id FROM ledger_accounts WHERE code = 'external:payments'), 'external', 3000, NULL, NULL, NULL FROM e;
`;

/** The public schema as the catalogs describe it (not the physical column numbers). */
async function schema(url: string): Promise<Record<string, string[]>> {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const list = async (sql: string) => (await db.query<{ d: string }>(sql)).rows.map((r) => r.d);
    return {
      columns: await list(`
        SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull
               || ' ' || a.attidentity::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') AS d
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`),
      constraints: await list(`
        SELECT c.conrelid::regclass || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) || ' ' || c.convalidated AS d
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' ORDER BY 1`),
      indexes: await list(`SELECT indexdef AS d FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`),
      triggers: await list(`
        SELECT pg_get_triggerdef(t.oid) AS d FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY 1`),
      functions: await list(`
        SELECT pg_get_functiondef(p.oid) AS d FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend x WHERE x.objid = p.oid AND x.deptype = 'e')
        ORDER BY 1`),
    };
  } finally {
    await db.end();
  }
}

async function migrate(url: string, list: Array<new () => MigrationInterface>): Promise<void> {
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    migrations: list,
    migrationsTableName: 'schema_migrations',
    logging: false,
  });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}

describe('migrations edited after landing', () => {
  const databases: string[] = [];
  const fresh = async () => {
    const name = `payments_upgrade_${process.pid}_${databases.length}`;
    const url = withDatabase(templateUrl(), name);
    await adminQuery(url, `DROP DATABASE IF EXISTS ${name}`);
    await adminQuery(url, `CREATE DATABASE ${name}`);
    databases.push(url);
    return url;
  };
  // A fresh database gets everything at once.
  let want: Record<string, string[]>;
  beforeAll(async () => {
    const current = await fresh();
    await migrate(current, migrations);
    want = await schema(current);
  });
  afterAll(async () => {
    for (const url of databases)
      await adminQuery(url, `DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  });

  const [transactionsVersions, ledgerVersions] = EDITED.map(versions);
  // Every ledger version, and every transactions version (each with the ledger it landed with or after).
  const builds = [
    ...ledgerVersions.map((ledger) => ({ transactions: transactionsVersions.at(-1)!, ledger })),
    ...transactionsVersions.map((transactions) => ({ transactions, ledger: ledgerVersions[0] })),
  ];

  it.each(builds.map((b) => [b.transactions.commit.slice(0, 7), b.ledger.commit.slice(0, 7), b]))(
    'a database made with transactions@%s and ledger@%s ends with the current schema and its books explained',
    async (_t, _l, build) => {
      const old = await fresh();
      const byName = (name: string) => migrations.find((m) => m.name === name)!;
      const upTo = migrations.slice(0, migrations.indexOf(byName('Transactions1763700300000')));
      await migrate(old, [...upTo, load(build.transactions.source), load(build.ledger.source)]);
      const db = new Client({ connectionString: old });
      await db.connect();
      try {
        await db.query(OLD_DATA);
        await migrate(old, migrations);
        expect(await schema(old)).toEqual(want);

        // What was posted the old way is explained by a deposit and a payout.
        const deposits = await db.query(`SELECT method, status, amount::int, entry_id FROM deposits`);
        expect(deposits.rows).toEqual([
          { method: 'manual', status: 'completed', amount: 10000, entry_id: '00000000-0000-4000-8000-000000000003' },
        ]);
        const payouts = await db.query(`SELECT kind, status, amount::int, entry_id FROM payouts`);
        expect(payouts.rows).toEqual([
          { kind: 'payment', status: 'completed', amount: 3000, entry_id: '00000000-0000-4000-8000-000000000004' },
        ]);
      } finally {
        await db.end();
      }
    },
    60_000,
  );
});
