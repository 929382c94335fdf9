import { randomUUID } from 'node:crypto';
import { createSeller, createUser, TestUser } from '../../test/support/identity';
import { asRequestOf, auditOf, newTestService, userPrincipal } from '../../test/support/service-test';
import { startTestApp, TestApp } from '../../test/support/test-app';
import type { Permission } from '../auth/permissions';
import type { UserPrincipal } from '../auth/principal';
import { AccessesService } from './accesses.service';

describe('AccessesService', () => {
  let t: TestApp;
  let service: AccessesService;
  let superuser: TestUser;
  let admin: UserPrincipal;
  let sellerId: string;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    service = newTestService(t, AccessesService);
    superuser = await createUser(t, { superuser: true });
    admin = await userPrincipal(t, superuser);
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    sellerId = await createSeller(t, superuser);
    user = await createUser(t);
  });

  const entries = async () =>
    (await t.db.query('SELECT user_id, permissions FROM accesses WHERE seller_id = $1 ORDER BY seq', [sellerId])).rows;
  /** A user holding `permissions` on the seller, as the principal of its next request. */
  const holder = async (permissions: Permission[]) => {
    const holding = await createUser(t);
    await service.grant(admin, sellerId, { user: holding.id, permissions });
    return userPrincipal(t, holding);
  };

  describe('grant', () => {
    it('grants by id or by e-mail, audited with the actor', async () => {
      const byId = await asRequestOf(admin, () =>
        service.grant(admin, sellerId, { user: user.id, permissions: ['transactions.view'] }),
      );
      const other = await createUser(t);
      await service.grant(admin, sellerId, { email: other.email.toUpperCase(), permissions: [] });

      expect(byId).toMatchObject({ user: user.id, permissions: ['transactions.view'] });
      expect(await entries()).toEqual([
        { user_id: user.id, permissions: ['transactions.view'] },
        { user_id: other.id, permissions: [] },
      ]);
      expect(await auditOf(t, byId.id)).toEqual([
        expect.objectContaining({
          action: 'access.granted',
          actor_id: admin.id,
          seller_id: sellerId,
          changes: { user: user.id, permissions: ['transactions.view'] },
        }),
      ]);
    });

    it('answers 409 access_exists for a second entry of the same user', async () => {
      await service.grant(admin, sellerId, { user: user.id, permissions: [] });

      await expect(
        service.grant(admin, sellerId, { user: user.id, permissions: ['seller.manage'] }),
      ).rejects.toMatchObject({ status: 409, code: 'access_exists' });
      expect(await entries()).toEqual([{ user_id: user.id, permissions: [] }]);
    });

    it('refuses a user that does not exist, on the field that named it', async () => {
      await expect(service.grant(admin, sellerId, { user: randomUUID(), permissions: [] })).rejects.toMatchObject({
        status: 400,
        errors: { user: ['must name an existing user'] },
      });
      await expect(
        service.grant(admin, sellerId, { email: 'nobody-here@example.com', permissions: [] }),
      ).rejects.toMatchObject({ errors: { email: ['must name an existing user'] } });
      expect(await entries()).toEqual([]);
    });

    it('lets a holder grant only what it holds', async () => {
      const manager = await holder(['accesses.manage', 'transactions.view']);

      await expect(
        service.grant(manager, sellerId, { user: user.id, permissions: ['transactions.view', 'transactions.void'] }),
      ).rejects.toMatchObject({ status: 403, code: 'permission_not_grantable' });
      expect((await entries()).map((e) => e.user_id)).not.toContain(user.id);

      await service.grant(manager, sellerId, { user: user.id, permissions: ['transactions.view'] });
      expect((await entries()).map((e) => e.user_id)).toContain(user.id);
    });
  });

  describe('update and revoke', () => {
    it('changes the permissions, audited from and to', async () => {
      const access = await service.grant(admin, sellerId, { user: user.id, permissions: ['transactions.view'] });

      const updated = await service.update(admin, sellerId, access.id, ['transactions.view', 'transactions.create']);

      expect(updated.permissions).toEqual(['transactions.view', 'transactions.create']);
      expect((await auditOf(t, access.id)).map((a) => [a.action, a.changes])).toEqual([
        ['access.granted', { user: user.id, permissions: ['transactions.view'] }],
        [
          'access.changed',
          {
            user: user.id,
            permissions: { from: ['transactions.view'], to: ['transactions.view', 'transactions.create'] },
          },
        ],
      ]);
    });

    it('refuses a holder its own entry, and leaves it as it was', async () => {
      const manager = await holder(['accesses.manage']);
      const [own] = (await service.list(sellerId, { limit: 10, descending: false, after: null })).results;

      await expect(service.update(manager, sellerId, own.id, [])).rejects.toMatchObject({
        code: 'own_access_not_changeable',
      });
      await expect(service.revoke(manager, sellerId, own.id)).rejects.toMatchObject({
        code: 'own_access_not_changeable',
      });
      expect(await entries()).toEqual([{ user_id: manager.id, permissions: ['accesses.manage'] }]);
    });

    it('revokes an entry once, audited; then it is 404', async () => {
      const access = await service.grant(admin, sellerId, { user: user.id, permissions: ['transactions.view'] });

      await service.revoke(admin, sellerId, access.id);
      await expect(service.revoke(admin, sellerId, access.id)).rejects.toMatchObject({
        status: 404,
        code: 'access_not_found',
      });

      expect(await entries()).toEqual([]);
      expect((await auditOf(t, access.id)).map((a) => a.action)).toEqual(['access.granted', 'access.revoked']);
    });

    it("answers 404 for another seller's entry and leaves it as it was", async () => {
      const access = await service.grant(admin, sellerId, { user: user.id, permissions: ['transactions.view'] });
      const otherSeller = await createSeller(t, superuser);

      await expect(service.update(admin, otherSeller, access.id, [])).rejects.toMatchObject({
        code: 'access_not_found',
      });
      await expect(service.revoke(admin, otherSeller, access.id)).rejects.toMatchObject({ code: 'access_not_found' });
      expect(await entries()).toEqual([{ user_id: user.id, permissions: ['transactions.view'] }]);
    });
  });
});
