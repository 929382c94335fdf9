import { createHash } from 'node:crypto';
import { createSeller, createUser, TestUser } from '../../test/support/identity';
import { asRequestOf, auditOf, newTestService, userPrincipal } from '../../test/support/service-test';
import { startTestApp, TestApp } from '../../test/support/test-app';
import { ApiKeysService } from './api-keys.service';

describe('ApiKeysService', () => {
  let t: TestApp;
  let superuser: TestUser;
  let service: ApiKeysService;
  let sellerId: string;
  let otherSellerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    service = newTestService(t, ApiKeysService);
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    sellerId = await createSeller(t, superuser);
    otherSellerId = await createSeller(t, superuser);
  });

  const stored = async (id: string) =>
    (await t.db.query('SELECT key_hash, key_suffix, active, deleted_at FROM api_keys WHERE id = $1', [id])).rows[0];
  const asSuperuser = async <T>(work: () => Promise<T>) => asRequestOf(await userPrincipal(t, superuser), work);

  describe('create', () => {
    it('answers the secret once and stores only its SHA-256 and last four characters', async () => {
      const created = await asSuperuser(() => service.create(sellerId, { label: 'shop', description: 'till' }));

      expect(created).toMatchObject({ label: 'shop', description: 'till', active: true });
      expect(created.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(await stored(created.id)).toEqual({
        key_hash: createHash('sha256').update(created.key).digest('hex'),
        key_suffix: created.key.slice(-4),
        active: true,
        deleted_at: null,
      });
      expect((await service.get(sellerId, created.id)) as object).not.toHaveProperty('key');
    });

    it('audits the creation with its actor, without the secret', async () => {
      const created = await asSuperuser(() =>
        service.create(sellerId, { label: 'shop', description: '', active: false }),
      );

      const audit = await auditOf(t, created.id);
      expect(audit).toEqual([
        {
          action: 'api_key.created',
          actor_kind: 'user',
          actor_id: superuser.id,
          seller_id: sellerId,
          changes: { label: 'shop', active: false, key_suffix: created.key.slice(-4) },
          request_id: 'req-service-test',
        },
      ]);
      expect(JSON.stringify(audit)).not.toContain(created.key);
    });
  });

  describe('authenticate', () => {
    it('finds the key behind its secret, in any letter case, and nothing behind another', async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '', active: false });

      expect(await service.authenticate(created.key)).toEqual({ id: created.id, sellerId, active: false });
      expect(await service.authenticate(created.key.toUpperCase())).toMatchObject({ id: created.id });
      expect(await service.authenticate(created.key.replace(/.$/, (c) => (c === '0' ? '1' : '0')))).toBeNull();
    });

    it('finds nothing behind the secret of a deleted key', async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '' });
      await service.remove(sellerId, created.id);

      expect(await service.authenticate(created.key)).toBeNull();
    });
  });

  describe('get and list', () => {
    it("answers 404 for another seller's key", async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '' });

      await expect(service.get(otherSellerId, created.id)).rejects.toMatchObject({
        status: 404,
        code: 'api_key_not_found',
      });
    });

    it("lists the seller's own keys that are not deleted", async () => {
      const first = await service.create(sellerId, { label: 'first', description: '' });
      const deleted = await service.create(sellerId, { label: 'deleted', description: '' });
      const last = await service.create(sellerId, { label: 'last', description: '' });
      await service.create(otherSellerId, { label: 'elsewhere', description: '' });
      await service.remove(sellerId, deleted.id);

      const page = await service.list(sellerId, { limit: 10, descending: false, after: null });
      expect(page.results.map((k) => k.id)).toEqual([first.id, last.id]);
    });
  });

  describe('update', () => {
    it('writes the change and audits only the fields that changed', async () => {
      const created = await service.create(sellerId, { label: 'shop', description: 'till' });

      const updated = await asSuperuser(() =>
        service.update(sellerId, created.id, { label: 'shop', description: 'back office', active: false }),
      );

      expect(updated).toMatchObject({ label: 'shop', description: 'back office', active: false });
      expect(await stored(created.id)).toMatchObject({ active: false });
      expect((await auditOf(t, created.id)).slice(1)).toEqual([
        expect.objectContaining({
          action: 'api_key.changed',
          changes: { description: { from: 'till', to: 'back office' }, active: { from: true, to: false } },
        }),
      ]);
    });

    it('audits nothing when nothing changes', async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '' });

      await service.update(sellerId, created.id, { label: 'shop', description: '' });

      expect((await auditOf(t, created.id)).map((a) => a.action)).toEqual(['api_key.created']);
    });

    it("refuses another seller's key with 404 and leaves it as it was", async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '' });

      await expect(service.update(otherSellerId, created.id, { active: false })).rejects.toMatchObject({
        code: 'api_key_not_found',
      });
      expect(await stored(created.id)).toMatchObject({ active: true });
      expect(await auditOf(t, created.id)).toHaveLength(1);
    });
  });

  describe('remove', () => {
    it('soft-deletes and deactivates the key, audited once; a second removal is 404', async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '' });

      await service.remove(sellerId, created.id);
      await expect(service.remove(sellerId, created.id)).rejects.toMatchObject({ code: 'api_key_not_found' });

      expect(await stored(created.id)).toMatchObject({ active: false, deleted_at: expect.any(Date) });
      await expect(service.get(sellerId, created.id)).rejects.toMatchObject({ status: 404 });
      expect((await auditOf(t, created.id)).map((a) => a.action)).toEqual(['api_key.created', 'api_key.deleted']);
    });

    it("refuses another seller's key", async () => {
      const created = await service.create(sellerId, { label: 'shop', description: '' });

      await expect(service.remove(otherSellerId, created.id)).rejects.toMatchObject({ code: 'api_key_not_found' });
      expect(await stored(created.id)).toMatchObject({ deleted_at: null });
    });
  });
});
