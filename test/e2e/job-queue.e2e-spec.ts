import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../src/config/config';
import { JobQueue } from '../../src/jobs/job-queue.service';
import { startTestApp, TestApp } from '../support/test-app';

/** Jobs queued in a database transaction (real PostgreSQL, the service's pipelined pool). */
describe('JobQueue.send in a database transaction', () => {
  let t: TestApp;
  let jobs: JobQueue;
  const suffix = Date.now().toString(36);
  const standard = `test.standard-${suffix}`;

  beforeAll(async () => {
    t = await startTestApp();
    jobs = new JobQueue(t.app.get<AppConfig>(APP_CONFIG), false);
    jobs.define({ name: standard, handler: async () => undefined });
    await jobs.onApplicationBootstrap();
  });
  afterAll(async () => {
    await jobs.onApplicationShutdown();
    await t.close();
  });

  const stored = async (name: string) =>
    (await t.db.query(`SELECT id::text, data FROM pgboss.job WHERE name = $1 ORDER BY created_on`, [name])).rows;
  const inTransaction = <T>(work: (manager: EntityManager) => Promise<T>): Promise<T> =>
    t.app.get(DataSource).transaction(work);

  it('exists with the id it answered once the transaction commits, and not at all when it rolls back', async () => {
    const id = await inTransaction((manager) => jobs.send(standard, { n: 1 }, {}, manager));
    expect(await stored(standard)).toEqual([{ id, data: { n: 1 } }]);

    await expect(
      inTransaction(async (manager) => {
        await jobs.send(standard, { n: 2 }, {}, manager);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await stored(standard)).toHaveLength(1);
  });

  it('waits for a job a singleton option may skip, and answers null when it was skipped', async () => {
    const keyed = { singletonKey: `key-${suffix}`, singletonSeconds: 300 };
    const one = await inTransaction((manager) => jobs.send(standard, { n: 3 }, keyed, manager));
    const two = await inTransaction((manager) => jobs.send(standard, { n: 4 }, keyed, manager));
    expect(one).not.toBeNull();
    expect(two).toBeNull();
    expect((await stored(standard)).filter((job) => job.data.n >= 3).map((job) => job.id)).toEqual([one]);
  });
});
