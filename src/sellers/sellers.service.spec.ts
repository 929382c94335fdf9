import { randomUUID } from 'node:crypto';
import { createSeller, createUser, grant, TestUser, validCnpj } from '../../test/support/identity';
import { SAMPLE_RATE_PLANS, SPLIT_DETAILS, SPLIT_DETAILS_ONLINE } from '../../test/support/payments';
import { asRequestOf, auditOf, newTestService, userPrincipal } from '../../test/support/service-test';
import { startTestApp, TestApp } from '../../test/support/test-app';
import type { UserPrincipal } from '../auth/principal';
import { PlansService } from '../plans/plans.service';
import { RatePlansSyncService } from '../plans/rate-plans-sync.service';
import { SellersService } from './sellers.service';

describe('SellersService', () => {
  let t: TestApp;
  let service: SellersService;
  let superuser: TestUser;
  let admin: UserPrincipal;
  /** Two rate plans, and a split plan of each. */
  let plans: { rate: string; split: string; otherRate: string; otherSplit: string };
  let sellerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    service = newTestService(t, SellersService);
    superuser = await createUser(t, { superuser: true });
    admin = await userPrincipal(t, superuser);
    await t.app.get(RatePlansSyncService).sync(SAMPLE_RATE_PLANS);
    const { rows } = await t.db.query('SELECT id FROM rate_plans ORDER BY seq LIMIT 2');
    const splitOf = async (rate: string) =>
      (
        await t.app.get(PlansService).createSplitPlan({
          name: 'Split',
          rate_plan: rate,
          split_details: SPLIT_DETAILS,
          split_details_online: SPLIT_DETAILS_ONLINE,
        })
      ).id;
    plans = {
      rate: rows[0].id,
      split: await splitOf(rows[0].id),
      otherRate: rows[1].id,
      otherSplit: await splitOf(rows[1].id),
    };
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    sellerId = await createSeller(t, superuser);
  });

  /** The audit rows of a seller after its creation (beforeEach creates it, audited). */
  const auditedChanges = async (id: string) => (await auditOf(t, id)).filter((row) => row.action !== 'seller.created');

  const stored = async (id: string) =>
    (await t.db.query('SELECT name, email, rate_plan_id, split_plan_id FROM sellers WHERE id = $1', [id])).rows[0];

  describe('create', () => {
    it('stores the document as digits, the e-mail in lower case and the name trimmed', async () => {
      const cnpj = validCnpj();
      const formatted = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;

      const created = await service.create({ name: '  Loja  ', document: formatted, email: 'Loja@Example.COM' });

      expect(created).toMatchObject({ name: 'Loja', document: cnpj, document_type: 'cnpj', email: 'loja@example.com' });
      expect(await service.findByDocument(cnpj)).toMatchObject({ id: created.id });
    });

    it('audits the creation, as the superuser who asked', async () => {
      const created = await asRequestOf(admin, () =>
        service.create({ name: 'Audited', document: validCnpj(), email: 'audited@example.com' }),
      );

      expect(await auditOf(t, created.id)).toEqual([
        expect.objectContaining({
          action: 'seller.created',
          actor_id: admin.id,
          seller_id: created.id,
          changes: { name: { from: null, to: 'Audited' }, email: { from: null, to: 'audited@example.com' } },
        }),
      ]);
    });

    it('answers 409 seller_exists for a document already registered', async () => {
      const document = validCnpj();
      await service.create({ name: 'First', document, email: 'first@example.com' });

      await expect(service.create({ name: 'Second', document, email: 'second@example.com' })).rejects.toMatchObject({
        status: 409,
        code: 'seller_exists',
      });
      expect((await t.db.query('SELECT count(*) FROM sellers WHERE document = $1', [document])).rows[0].count).toBe(
        '1',
      );
    });
  });

  describe('update', () => {
    it('lets a seller manager change name and e-mail, unaudited', async () => {
      const manager = await createUser(t);
      await grant(t, superuser, sellerId, manager, ['seller.manage']);

      await service.update(await userPrincipal(t, manager), sellerId, { name: ' New name ', email: 'NEW@example.com' });

      expect(await stored(sellerId)).toMatchObject({ name: 'New name', email: 'new@example.com' });
      expect(await auditedChanges(sellerId)).toEqual([]);
    });

    it('keeps the commercial terms to superusers, changing nothing for anyone else', async () => {
      const manager = await userPrincipal(t, await createUser(t));

      await expect(service.update(manager, sellerId, { name: 'Sneaky', rate_plan: plans.rate })).rejects.toMatchObject({
        status: 403,
      });

      expect(await stored(sellerId)).toMatchObject({ rate_plan_id: null });
      expect((await stored(sellerId)).name).not.toBe('Sneaky');
    });

    it('audits a change of commercial terms with what they were and are', async () => {
      const developer = await createSeller(t, superuser);

      await asRequestOf(admin, () =>
        service.update(admin, sellerId, {
          rate_plan: plans.rate,
          split_plan: plans.split,
          developer_account: developer,
        }),
      );

      expect(await stored(sellerId)).toMatchObject({ rate_plan_id: plans.rate, split_plan_id: plans.split });
      expect(await auditedChanges(sellerId)).toEqual([
        expect.objectContaining({
          action: 'seller.commercial_terms_changed',
          actor_id: admin.id,
          seller_id: sellerId,
          changes: {
            rate_plan: { from: null, to: plans.rate },
            split_plan: { from: null, to: plans.split },
            developer_account: { from: null, to: developer },
          },
        }),
      ]);
    });

    it('audits nothing when the commercial terms asked are the current ones', async () => {
      await service.update(admin, sellerId, { rate_plan: plans.rate });
      await service.update(admin, sellerId, { rate_plan: plans.rate, name: 'Renamed' });

      expect((await auditedChanges(sellerId)).map((a) => a.changes)).toEqual([
        { rate_plan: { from: null, to: plans.rate } },
      ]);
      expect(await stored(sellerId)).toMatchObject({ name: 'Renamed' });
    });

    it("refuses a split plan that does not distribute the seller's rate plan", async () => {
      await service.update(admin, sellerId, { rate_plan: plans.rate, split_plan: plans.split });

      await expect(service.update(admin, sellerId, { split_plan: plans.otherSplit })).rejects.toMatchObject({
        status: 400,
        code: 'split_plan_rate_plan_mismatch',
      });
      await expect(service.update(admin, sellerId, { rate_plan: plans.otherRate })).rejects.toMatchObject({
        code: 'split_plan_rate_plan_mismatch',
      });
      expect(await stored(sellerId)).toMatchObject({ rate_plan_id: plans.rate, split_plan_id: plans.split });

      await service.update(admin, sellerId, { rate_plan: plans.otherRate, split_plan: plans.otherSplit });
      expect(await stored(sellerId)).toMatchObject({ rate_plan_id: plans.otherRate, split_plan_id: plans.otherSplit });
    });

    it('refuses plans that do not exist', async () => {
      await expect(service.update(admin, sellerId, { rate_plan: randomUUID() })).rejects.toMatchObject({
        code: 'rate_plan_not_found',
      });
      await expect(
        service.update(admin, sellerId, { rate_plan: plans.rate, split_plan: randomUUID() }),
      ).rejects.toMatchObject({ code: 'split_plan_not_found' });
      expect(await stored(sellerId)).toMatchObject({ rate_plan_id: null, split_plan_id: null });
    });

    it('refuses a developer account or participant that is no unified account', async () => {
      const missing = randomUUID();

      await expect(
        service.update(admin, sellerId, { developer_account: missing, split_participants: { Master: missing } }),
      ).rejects.toMatchObject({
        status: 400,
        errors: {
          developer_account: ['must be an existing unified account'],
          'split_participants.Master': ['must be an existing unified account'],
        },
      });
    });

    it('answers 404 for an unknown seller', async () => {
      await expect(service.update(admin, randomUUID(), { name: 'Nobody' })).rejects.toMatchObject({
        status: 404,
        code: 'seller_not_found',
      });
    });
  });

  describe('list', () => {
    it('shows a user only the sellers where it has an access, and a superuser all', async () => {
      const member = await createUser(t);
      await grant(t, superuser, sellerId, member, ['transactions.view']);
      const page = { limit: 100, descending: true, after: null };

      const seen = await service.list(await userPrincipal(t, member), page);
      expect(seen.results.map((s) => s.id)).toEqual([sellerId]);
      expect((await service.list(admin, page)).results.map((s) => s.id)).toContain(sellerId);
      expect((await service.list(admin, page)).results.length).toBeGreaterThan(1);
    });
  });

  describe('sub-accounts', () => {
    it('opens the virtual account of a new sub-account under the same id, and lists it', async () => {
      const created = await service.createSubaccount(sellerId, '  Master  ');

      expect(created).toMatchObject({ name: 'Master' });
      expect(
        (await t.db.query('SELECT kind, seller_id FROM ledger_accounts WHERE id = $1', [created.id])).rows,
      ).toEqual([{ kind: 'virtual', seller_id: sellerId }]);
      expect(await service.unknownAccounts([created.id, sellerId, randomUUID()])).toHaveLength(1);
      const listed = await service.listSubaccounts(sellerId, { limit: 10, descending: false, after: null });
      expect(listed.results.map((s) => s.id)).toEqual([created.id]);
    });
  });
});
