import { RatePlansSyncService, SyncFileError } from '../../src/plans/rate-plans-sync.service';
import { createApiKey, createSeller, createUser, TestUser } from '../support/identity';
import { SAMPLE_RATE_PLANS } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';

const SAMPLE = SAMPLE_RATE_PLANS;

/** Rate plans, split plans and simulation (spec 2.3, 2.4, 4.3, 4.4; API.md sections 6 and 7). */
describe('plans', () => {
  let t: TestApp;
  let superuser: TestUser;
  let user: TestUser;
  let apiKey: string;
  let ratePlanId: string;

  const splitDetails = `{'credit1': {'Visa': {'Programador': 0.5, 'Master': 1.0, 'Agente': '0.75'}, 'Todas as bandeiras %': {'Master': 1.2}}, 'debit1': {'PIX': {'Master': 0.2}, 'Boleto': {'Master': 0.3}}}`;
  const splitOnline = '{"credit1": {"Todas as bandeiras %": {"Master": 2}}}';

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    user = await createUser(t);
    const seller = await createSeller(t, superuser);
    apiKey = (await createApiKey(t, superuser.access, seller)).key;
    await t.app.get(RatePlansSyncService).sync(SAMPLE);
    const list = await t.http.get('/plans/plans/rates?search=padr', { token: user.access });
    ratePlanId = list.body.results[0].id;
  });
  afterAll(() => t.close());

  const createSplitPlan = (body: Record<string, unknown>, token = superuser.access) =>
    t.http.post('/plans/plans/split', body, { token });

  describe('rate plans', () => {
    it('lists rate plans with search and pagination, and shows one with its fee table', async () => {
      // The three sample plans, named "... 2026" (other tests add plans of their own).
      const all = await t.http.get('/plans/plans/rates?limit=2&search=2026', { token: user.access });
      expect(all.status).toBe(200);
      expect(all.body.results).toHaveLength(2);
      const rest = await t.http.get(`/plans/plans/rates?limit=2&search=2026&cursor=${all.body.next_cursor}`, {
        token: user.access,
      });
      expect(rest.body.results).toHaveLength(1);
      expect(rest.body.next_cursor).toBeNull();

      const found = await t.http.get('/plans/plans/rates/?search=VAREJO', { token: user.access });
      expect(found.body.results.map((p: { name: string }) => p.name)).toEqual(['Varejo 2026']);
      expect((await t.http.get('/plans/plans/rates?search=%25', { token: user.access })).body.results).toEqual([]);

      const one = await t.http.get(`/plans/plans/rates/${ratePlanId}/`, { token: user.access });
      expect(one.body).toMatchObject({
        id: ratePlanId,
        name: 'Padrão 2026',
        external_id: 'FEE-STD-2026',
        active: true,
      });
      expect(one.body.fees.credit1.Visa).toEqual({ percentage: '2.99', fixed: '0.50' });
      expect(one.body.fees.debit1.PIX).toEqual({ percentage: '0.99', fixed: '0.00' });
      expect(
        (await t.http.get('/plans/plans/rates/7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11', { token: user.access })).status,
      ).toBe(404);
    });

    it('takes a JWT: no credential 401, an API key 403', async () => {
      expect((await t.http.get('/plans/plans/rates')).status).toBe(401);
      expect((await t.http.get('/plans/plans/rates', { token: apiKey })).status).toBe(403);
      expect((await t.http.get(`/plans/plans/rates/${ratePlanId}`, { token: 'bad' })).status).toBe(401);
    });

    it('answers 405 with Allow and the error body to POST, PUT, PATCH and DELETE, whatever the credential', async () => {
      const credentials: Array<[string, string | undefined]> = [
        ['none', undefined],
        ['bad', 'not-a-token'],
        ['api key', apiKey],
        ['user', user.access],
        ['superuser', superuser.access],
      ];
      for (const [, token] of credentials) {
        for (const [method, path, allow] of [
          ['POST', '/plans/plans/rates/', 'GET, HEAD'],
          ['PUT', `/plans/plans/rates/${ratePlanId}/`, 'GET, HEAD'],
          ['PATCH', `/plans/plans/rates/${ratePlanId}/`, 'GET, HEAD'],
          ['DELETE', `/plans/plans/rates/${ratePlanId}/`, 'GET, HEAD'],
          ['DELETE', '/plans/plans/rates/7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11', 'GET, HEAD'],
        ]) {
          const res = await t.http.request(method, path, {
            token,
            body: method === 'DELETE' ? undefined : { name: 'x' },
          });
          expect({ method, path, status: res.status, allow: res.headers.get('allow') }).toEqual({
            method,
            path,
            status: 405,
            allow,
          });
          expect(res.body).toMatchObject({
            statusCode: 405,
            code: 'method_not_allowed',
            request_id: expect.any(String),
          });
        }
      }
      expect((await t.http.get(`/plans/plans/rates/${ratePlanId}`, { token: user.access })).status).toBe(200);
    });
  });

  describe('rate plan synchronisation', () => {
    it('upserts by external_id: a second run of the same file changes nothing, a changed plan is updated', async () => {
      // Plans of its own (external ids and names no other test reads): the sample plans stay as they are.
      const own = `sync-${Date.now().toString(36)}`;
      const file = structuredClone(SAMPLE).map((plan: { external_id: string }, i: number) => ({
        ...plan,
        external_id: `${own}-${plan.external_id}`,
        name: `${own} ${i}`,
      }));
      const sync = t.app.get(RatePlansSyncService);
      expect(await sync.sync(file)).toEqual({ total: 3, created: 3, updated: 0, unchanged: 0 });
      expect(await sync.sync(file)).toEqual({ total: 3, created: 0, updated: 0, unchanged: 3 });
      const changed = structuredClone(file);
      changed[0].fees.credit1.Visa.percentage = '3.09';
      changed.push({
        external_id: `${own}-FEE-NEW`,
        name: `${own} new`,
        description: '',
        active: false,
        fees: { debit1: { PIX: { percentage: '1', fixed: '0' } } },
      });
      expect(await sync.sync(changed)).toEqual({ total: 4, created: 1, updated: 1, unchanged: 2 });
      const found = await t.http.get(`/plans/plans/rates?search=${encodeURIComponent(`${own} 0`)}`, {
        token: user.access,
      });
      expect(found.body.results).toHaveLength(1);
      expect(found.body.results[0].fees.credit1.Visa.percentage).toBe('3.09');
      // Money in the answer has two decimals whatever the file said ("0" → "0.00"), percentages no trailing zeros.
      const added = await t.http.get(`/plans/plans/rates?search=${encodeURIComponent(`${own} new`)}`, {
        token: user.access,
      });
      expect(added.body.results[0].fees).toEqual({ debit1: { PIX: { percentage: '1', fixed: '0.00' } } });
    });

    it('refuses a bad file whole, naming the path of every problem', async () => {
      const before = (await t.db.query('SELECT count(*)::int AS n FROM rate_plans')).rows[0].n;
      const bad = [
        { external_id: 'OK-1', name: 'Fine', fees: {} },
        { external_id: 'BAD', name: 'Bad', fees: { credit2: { Visa: { percentage: '2.5' } } } },
        'nope',
        { external_id: 'OK-1', name: '', fees: { pix1: {} } },
      ];
      try {
        await t.app.get(RatePlansSyncService).sync(bad);
        throw new Error('accepted');
      } catch (error) {
        expect(error).toBeInstanceOf(SyncFileError);
        expect(Object.keys((error as SyncFileError).problems).sort()).toEqual([
          '[1].fees.credit2.Visa.fixed',
          '[2]',
          '[3].external_id',
          '[3].fees.pix1',
          '[3].name',
        ]);
      }
      expect((await t.db.query('SELECT count(*)::int AS n FROM rate_plans')).rows[0].n).toBe(before);
    });

    it('never deletes a rate plan, even from SQL', async () => {
      await expect(t.db.query('DELETE FROM rate_plans WHERE id = $1', [ratePlanId])).rejects.toThrow(/never deleted/);
    });
  });

  describe('split plans', () => {
    it('creates a plan: 201 echoing the input with single quotes normalised, automatic_developer_fee stored true', async () => {
      const res = await createSplitPlan({
        name: 'Parceiros',
        rate_plan: ratePlanId.toUpperCase(), // answered as stored, lower-cased
        split_details: splitDetails,
        split_details_online: splitOnline,
        automatic_developer_fee: false,
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        name: 'Parceiros',
        rate_plan: ratePlanId,
        split_details: splitDetails.replace(/'/g, '"'),
        split_details_online: splitOnline,
        automatic_developer_fee: true,
        created_at: expect.any(String),
      });
      const read = await t.http.get(`/plans/plans/split/${res.body.id}`, { token: superuser.access });
      expect(read.body).toEqual(res.body);
      const list = await t.http.get('/plans/plans/split?search=parceiros', { token: user.access });
      expect(list.body.results.map((p: { id: string }) => p.id)).toContain(res.body.id);
    });

    it('requires every field and an existing rate plan', async () => {
      const missing = await createSplitPlan({});
      expect(missing.status).toBe(400);
      expect(Object.keys(missing.body.errors).sort()).toEqual([
        'name',
        'rate_plan',
        'split_details',
        'split_details_online',
      ]);
      const unknown = await createSplitPlan({
        name: 'x',
        rate_plan: '7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11',
        split_details: '{}',
        split_details_online: '{}',
      });
      expect(unknown.status).toBe(400);
      expect(unknown.body.code).toBe('rate_plan_not_found');
      const notString = await createSplitPlan({
        name: 'x',
        rate_plan: ratePlanId,
        split_details: { credit1: {} },
        split_details_online: '{}',
      });
      expect(notString.body.errors.split_details).toBeDefined();
    });

    it.each([
      ['invalid JSON', '{"credit1": ', 'split_details'],
      ['a key credit0', '{"credit0": {"Visa": {"Master": 1}}}', 'split_details.credit0'],
      ['a key pix1', '{"pix1": {"PIX": {"Master": 1}}}', 'split_details.pix1'],
      ['a negative percentage', '{"credit3": {"Visa": {"Agente": -1}}}', 'split_details.credit3.Visa.Agente'],
      ['an over-100 percentage', '{"credit3": {"Visa": {"Agente": 101}}}', 'split_details.credit3.Visa.Agente'],
      ['a cell summing over 100', '{"credit3": {"Visa": {"A": 60, "B": "40.5"}}}', 'split_details.credit3.Visa'],
      ['a non-object cell', '{"credit3": {"Visa": 10}}', 'split_details.credit3.Visa'],
      // Taken once: PostgreSQL then refused every charge the cell resolved.
      ['a label with an escaped NUL', '{"credit1": {"Visa": {"A\\u0000": 1}}}', 'split_details.credit1.Visa.A\u0000'],
    ])('refuses %s with 400 and the path', async (_name, document, path) => {
      const res = await createSplitPlan({
        name: 'Bad',
        rate_plan: ratePlanId,
        split_details: document,
        split_details_online: '{}',
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(Object.keys(res.body.errors)).toEqual([path]);
    });

    it('reports problems of both documents, each under its own field', async () => {
      const res = await createSplitPlan({
        name: 'Bad',
        rate_plan: ratePlanId,
        split_details: '{"debit2": {}}',
        split_details_online: '{"credit1": {"Visa": []}}',
      });
      expect(Object.keys(res.body.errors).sort()).toEqual([
        'split_details.debit2',
        'split_details_online.credit1.Visa',
      ]);
    });

    it('takes at most 50 labels in a cell (each is a share of every transaction the cell prices)', async () => {
      const cell = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`L${i}`, 0.01]));
      const plan = (count: number) =>
        createSplitPlan({
          name: `Labels ${count}`,
          rate_plan: ratePlanId,
          split_details: JSON.stringify({ credit1: { Visa: cell(count) } }),
          split_details_online: JSON.stringify({ credit1: { 'Todas as bandeiras %': cell(1) } }),
        });
      expect((await plan(50)).status).toBe(201);
      const refused = await plan(3_000);
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual({ 'split_details.credit1.Visa': ['must have at most 50 labels'] });
    });

    it('is immutable: PUT, PATCH and DELETE answer 405', async () => {
      const plan = (
        await createSplitPlan({ name: 'Fixed', rate_plan: ratePlanId, split_details: '{}', split_details_online: '{}' })
      ).body;
      for (const method of ['PUT', 'PATCH', 'DELETE']) {
        const res = await t.http.request(method, `/plans/plans/split/${plan.id}/`, {
          token: superuser.access,
          body: method === 'DELETE' ? undefined : { name: 'x' },
        });
        expect(res.status).toBe(405);
        expect(res.headers.get('allow')).toBe('GET, HEAD');
      }
      await expect(t.db.query(`UPDATE split_plans SET name = 'x' WHERE id = $1`, [plan.id])).rejects.toThrow(
        /immutable/,
      );
    });

    it('takes a JWT: no credential 401, an API key 403', async () => {
      const body = { name: 'x', rate_plan: ratePlanId, split_details: '{}', split_details_online: '{}' };
      expect((await t.http.post('/plans/plans/split', body)).status).toBe(401);
      expect((await t.http.post('/plans/plans/split', body, { token: apiKey })).status).toBe(403);
      expect((await t.http.get('/plans/plans/split', { token: apiKey })).status).toBe(403);
    });
  });

  describe('simulate', () => {
    let planId: string;
    beforeAll(async () => {
      planId = (
        await createSplitPlan({
          name: 'Sim',
          rate_plan: ratePlanId,
          split_details: splitDetails,
          split_details_online: splitOnline,
        })
      ).body.id;
    });
    const simulate = (body: Record<string, unknown>) =>
      t.http.post(`/plans/plans/split/${planId}/simulate`, body, { token: user.access });

    it('resolves fee and shares of a card-present credit payment', async () => {
      const res = await simulate({
        amount: '100.00',
        payment_type: 'credit',
        installments: 1,
        card_brand: 'Visa',
        entry_mode: 'card_present',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        fee: { percentage: '2.99', fixed: '0.50', amount: '3.49' },
        shares: [
          { label: 'Programador', role: 'developer', percentage: '0.5', amount: '0.50', recipient: null },
          { label: 'Master', role: 'participant', percentage: '1', amount: '1.00', recipient: null },
          { label: 'Agente', role: 'participant', percentage: '0.75', amount: '0.75', recipient: null },
        ],
        developer_amount: '0.50',
        participants_amount: '1.75',
        seller_net: '94.26',
      });
    });

    it('uses the online table, the wildcard brand, and the pix rewrite', async () => {
      const online = await simulate({ amount: '100.00', payment_type: 'credit', card_brand: 'Elo' });
      // Elo credit1 in the sample: 2.99 + 0.30 = 3.29% + 0.50
      expect(online.body.fee).toEqual({ percentage: '3.29', fixed: '0.50', amount: '3.79' });
      expect(online.body.shares).toEqual([
        { label: 'Master', role: 'participant', percentage: '2', amount: '2.00', recipient: null },
      ]);
      const pix = await simulate({ amount: '50.00', payment_type: 'pix', entry_mode: 'card_present' });
      expect(pix.body.fee.amount).toBe('0.50');
      expect(pix.body.shares.map((s: { amount: string }) => s.amount)).toEqual(['0.10']);
      expect(pix.body.seller_net).toBe('49.40');
    });

    it('refuses what the rate plan does not price, and a negative net', async () => {
      const amex = await simulate({ amount: '100.00', payment_type: 'debit', card_brand: 'American Express' });
      // the sample's debit1 has a wildcard: American Express falls back to it
      expect(amex.status).toBe(200);
      const thirteen = await simulate({
        amount: '100.00',
        payment_type: 'credit',
        installments: 13,
        card_brand: 'Visa',
      });
      expect(thirteen.status).toBe(400);
      expect(thirteen.body.code).toBe('payment_method_not_accepted');
      const tiny = await simulate({ amount: '0.10', payment_type: 'credit', card_brand: 'Visa' });
      expect(tiny.status).toBe(400);
      expect(tiny.body.code).toBe('negative_seller_net');
    });

    it('validates the input', async () => {
      const res = await simulate({ amount: 100, payment_type: 'cash', installments: 0 });
      expect(Object.keys(res.body.errors).sort()).toEqual(['amount', 'installments', 'payment_type']);
      // A missing brand is named once, for what it is; a given one is checked as given.
      expect((await simulate({ amount: '1.00', payment_type: 'credit' })).body.errors.card_brand).toEqual([
        'is required for credit and debit',
      ]);
      expect(
        (await simulate({ amount: '1.00', payment_type: 'credit', card_brand: 7 })).body.errors.card_brand,
      ).toContain('must be a string');
      expect(
        (await simulate({ amount: '1.00', payment_type: 'pix', card_brand: ' ' })).body.errors.card_brand,
      ).toBeDefined();
      expect(
        (await simulate({ amount: '1.00', payment_type: 'debit', installments: 2, card_brand: 'Visa' })).body.errors
          .installments,
      ).toBeDefined();
      expect(
        (
          await t.http.post(
            '/plans/plans/split/7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11/simulate',
            { amount: '1.00', payment_type: 'pix' },
            { token: user.access },
          )
        ).status,
      ).toBe(404);
    });
  });

  describe('seller plans', () => {
    it("sets a seller's rate and split plans; the split plan must distribute the seller's rate plan", async () => {
      const seller = await createSeller(t, superuser);
      const other = (await t.http.get('/plans/plans/rates?search=varejo', { token: user.access })).body.results[0].id;
      const plan = (
        await createSplitPlan({ name: 'S', rate_plan: ratePlanId, split_details: '{}', split_details_online: '{}' })
      ).body.id;

      const mismatch = await t.http.patch(
        `/sellers/${seller}`,
        { rate_plan: other, split_plan: plan },
        { token: superuser.access },
      );
      expect(mismatch.status).toBe(400);
      expect(mismatch.body.code).toBe('split_plan_rate_plan_mismatch');
      const ok = await t.http.patch(
        `/sellers/${seller}`,
        { rate_plan: ratePlanId, split_plan: plan },
        { token: superuser.access },
      );
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ rate_plan: ratePlanId, split_plan: plan });
      expect(
        (await t.http.patch(`/sellers/${seller}`, { rate_plan: other }, { token: superuser.access })).body.code,
      ).toBe('split_plan_rate_plan_mismatch');
      const unknown = await t.http.patch(
        `/sellers/${seller}`,
        { split_plan: '7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11' },
        { token: superuser.access },
      );
      expect(unknown.body.code).toBe('split_plan_not_found');
      const cleared = await t.http.patch(`/sellers/${seller}`, { split_plan: null }, { token: superuser.access });
      expect(cleared.body.split_plan).toBeNull();
    });

    it("two changes of a seller's plans at once never leave it a split plan of another rate plan", async () => {
      const other = (await t.http.get('/plans/plans/rates?search=varejo', { token: user.access })).body.results[0].id;
      const splitOf = async (rate: string) =>
        (await createSplitPlan({ name: 'S', rate_plan: rate, split_details: '{}', split_details_online: '{}' })).body
          .id as string;
      const [first, second, ofOther] = [await splitOf(ratePlanId), await splitOf(ratePlanId), await splitOf(other)];
      for (let round = 0; round < 10; round++) {
        const seller = await createSeller(t, superuser);
        const patch = (body: object) => t.http.patch(`/sellers/${seller}`, body, { token: superuser.access });
        expect((await patch({ rate_plan: ratePlanId, split_plan: first })).status).toBe(200);
        // One moves the seller to the other rate plan with its split plan; the other picks another split plan of the first.
        const answers = await Promise.all([
          patch({ rate_plan: other, split_plan: ofOther }),
          patch({ split_plan: second }),
        ]);
        expect(answers.every((a) => a.status === 200 || a.body.code === 'split_plan_rate_plan_mismatch')).toBe(true);
        const { rows } = await t.db.query(
          `SELECT s.rate_plan_id = p.rate_plan_id AS matches FROM sellers s JOIN split_plans p ON p.id = s.split_plan_id
            WHERE s.id = $1`,
          [seller],
        );
        expect(rows).toEqual([{ matches: true }]);
      }
    });
  });
});
