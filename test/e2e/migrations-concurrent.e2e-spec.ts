import { migrations } from '../../migrations';
import { runMigrations } from '../../src/database/migrate';
import { adminQuery, templateUrl, withDatabase } from '../support/database';

/** Processes started at once against one database (an API and its workers, replicas). */
describe('migrations run by processes starting at once', () => {
  const name = `payments_concurrent_${process.pid}`;
  const url = withDatabase(templateUrl(), name);
  beforeAll(async () => {
    await adminQuery(url, `DROP DATABASE IF EXISTS ${name}`);
    await adminQuery(url, `CREATE DATABASE ${name}`);
  });
  afterAll(async () => {
    await adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('one applies them all while the others wait, also through the indexes built CONCURRENTLY', async () => {
    // Were the others blocked inside their lock statement, each would hold a snapshot that
    // CREATE INDEX CONCURRENTLY waits for, while they wait for its migrator: for good.
    const outcomes = await Promise.all([runMigrations(url), runMigrations(url), runMigrations(url)]);
    expect(outcomes.map((applied) => applied.length).sort((a, b) => a - b)).toEqual([0, 0, migrations.length]);
  }, 60_000);
});
