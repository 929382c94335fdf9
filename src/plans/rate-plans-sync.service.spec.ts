import { randomUUID } from 'node:crypto';
import { SAMPLE_RATE_PLANS } from '../../test/support/payments';
import { newTestService } from '../../test/support/service-test';
import { startTestApp, TestApp } from '../../test/support/test-app';
import { RatePlansSyncService, SyncFileError } from './rate-plans-sync.service';

type PlanFile = Array<Record<string, unknown> & { external_id: string }>;

describe('RatePlansSyncService', () => {
  let t: TestApp;
  let service: RatePlansSyncService;

  beforeAll(async () => {
    t = await startTestApp();
    service = newTestService(t, RatePlansSyncService);
  });
  afterAll(() => t.close());

  /** The sample export under external ids of this test's own, so tests share no plan. */
  const ownPlans = (): PlanFile => {
    const prefix = randomUUID();
    return (SAMPLE_RATE_PLANS as PlanFile).map((plan) => ({ ...plan, external_id: `${prefix}:${plan.external_id}` }));
  };
  const stored = async (file: PlanFile) =>
    (
      await t.db.query(
        'SELECT external_id, name, active FROM rate_plans WHERE external_id = ANY($1) ORDER BY external_id',
        [file.map((p) => p.external_id)],
      )
    ).rows;
  const problemsOf = (document: unknown): Record<string, string[]> => {
    try {
      service.validate(document);
    } catch (error) {
      if (error instanceof SyncFileError) return error.problems;
      throw error;
    }
    throw new Error('the file was accepted');
  };

  it('creates the plans of a new file, reporting progress after each one', async () => {
    const file = ownPlans();
    const progress: number[] = [];

    const summary = await service.sync(file, (done) => progress.push(done));

    expect(summary).toEqual({ total: file.length, created: file.length, updated: 0, unchanged: 0 });
    expect(progress).toEqual(file.map((_, i) => i + 1));
    expect(await stored(file)).toHaveLength(file.length);
  });

  it('upserts by external_id: the same file again changes nothing, a changed plan is updated', async () => {
    const file = ownPlans();
    await service.sync(file);

    expect(await service.sync(file)).toEqual({ total: file.length, created: 0, updated: 0, unchanged: file.length });

    const changed = file.map((plan, i) => (i === 0 ? { ...plan, name: '  Renamed  ', active: false } : plan));
    expect(await service.sync(changed)).toEqual({
      total: file.length,
      created: 0,
      updated: 1,
      unchanged: file.length - 1,
    });
    expect((await stored(file)).find((p: { external_id: string }) => p.external_id === file[0].external_id)).toEqual({
      external_id: file[0].external_id,
      name: 'Renamed',
      active: false,
    });
  });

  it('keeps the description and active flag of a plan whose entry leaves them out; a new plan gets the defaults', async () => {
    const file = ownPlans();
    await service.sync(file.map((plan, i) => (i === 0 ? { ...plan, active: false, description: 'Retired' } : plan)));
    const withoutThem = ({ description: _d, active: _a, ...rest }: Record<string, unknown>) => rest;
    const [first, ...others] = file;
    const fresh = { ...withoutThem(first), external_id: `${first.external_id}:new` };

    expect(await service.sync([withoutThem(first), fresh, ...others])).toEqual({
      total: file.length + 1,
      created: 1,
      updated: 0,
      unchanged: file.length,
    });
    const { rows } = await t.db.query(
      'SELECT external_id, description, active FROM rate_plans WHERE external_id = ANY($1) ORDER BY external_id',
      [[first.external_id, fresh.external_id]],
    );
    expect(rows).toEqual([
      { external_id: first.external_id, description: 'Retired', active: false },
      { external_id: fresh.external_id, description: '', active: true },
    ]);
  });

  it('refuses a whole file with one bad plan and writes none of it, naming every problem by path', async () => {
    const file = ownPlans();
    const bad = [...file, { ...file[0], name: '', colour: 'red', fees: { credit1: { Visa: { percentage: 'x' } } } }];

    await expect(service.sync(bad)).rejects.toBeInstanceOf(SyncFileError);

    expect(await stored(file)).toEqual([]);
    const problems = problemsOf(bad);
    const at = `[${file.length}]`;
    expect(problems[`${at}.external_id`]).toEqual(['repeats the external_id of [0]']);
    expect(problems[`${at}.name`]).toEqual(['must be a non-empty string of at most 200 characters']);
    expect(problems[`${at}.colour`]).toEqual(['unknown field']);
    expect(Object.keys(problems).some((path) => path.startsWith(`${at}.fees.credit1.Visa`))).toBe(true);
    expect(Object.keys(problems).every((path) => path.startsWith(at))).toBe(true);
  });

  it('refuses a name of more than one line, or with a direction override, as the API refuses its names', () => {
    const file = ownPlans();
    for (const name of ['Padrão\n2026', 'Padrão \u202e6202']) {
      expect(problemsOf([{ ...file[0], name }])).toEqual({
        '[0].name': ['must be one line of text, without control characters'],
      });
    }
  });

  it('refuses what is not an array of objects', () => {
    expect(problemsOf({ plans: [] })).toEqual({ $: ['must be a JSON array of rate plans'] });
    expect(problemsOf([42])).toEqual({ '[0]': ['must be an object'] });
  });

  it('writes nothing when the transaction fails half-way', async () => {
    const file = ownPlans();

    await expect(
      service.sync(file, (done) => {
        if (done === 2) throw new Error('interrupted');
      }),
    ).rejects.toThrow('interrupted');

    expect(await stored(file)).toEqual([]);
  });
});
