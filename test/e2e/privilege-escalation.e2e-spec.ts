import { PERMISSIONS } from '../../src/auth/permissions';
import { payingSeller, PayingSeller, SPLIT_DETAILS, SPLIT_DETAILS_ONLINE } from '../support/payments';
import { createSeller, createUser, grant, login, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The privilege escalation holes of issue 9.4 and the users admin of API.md section 3: each
 * test below failed on the code before the fix.
 */
describe('privilege escalation', () => {
  let t: TestApp;
  let superuser: TestUser;
  let s: PayingSeller;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    s = await payingSeller(t, superuser);
  });
  afterAll(() => t.close());

  const accessesOf = (sellerId: string) => `/sellers/${sellerId}/accesses`;

  describe('accesses.manage', () => {
    it('cannot grant itself every permission: its own entry is not changeable', async () => {
      const manager = await createUser(t);
      const entry = await grant(t, superuser, s.sellerId, manager, ['accesses.manage']);
      const res = await t.http.patch(
        `${accessesOf(s.sellerId)}/${entry}`,
        { permissions: [...PERMISSIONS] },
        { token: manager.access },
      );
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('own_access_not_changeable');
      const deleted = await t.http.delete(`${accessesOf(s.sellerId)}/${entry}`, { token: manager.access });
      expect(deleted.status).toBe(403);
      const me = await t.http.get('/user/me', { token: manager.access });
      expect(me.body.accesses).toEqual([{ seller: s.sellerId, permissions: ['accesses.manage'] }]);
    });

    it('grants only permissions it holds on that seller, to others too', async () => {
      const manager = await createUser(t);
      await grant(t, superuser, s.sellerId, manager, ['accesses.manage', 'transactions.view']);
      const accomplice = await createUser(t);
      const refused = await t.http.post(
        accessesOf(s.sellerId),
        { user: accomplice.id, permissions: ['transactions.view', 'virtualaccounts.operate'] },
        { token: manager.access },
      );
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('permission_not_grantable');
      expect(refused.body.message).toContain('virtualaccounts.operate');
      const { rows } = await t.db.query('SELECT 1 FROM accesses WHERE user_id = $1', [accomplice.id]);
      expect(rows).toHaveLength(0);

      const granted = await t.http.post(
        accessesOf(s.sellerId),
        { user: accomplice.id, permissions: ['transactions.view'] },
        { token: manager.access },
      );
      expect(granted.status).toBe(201);
      const raised = await t.http.patch(
        `${accessesOf(s.sellerId)}/${granted.body.id}`,
        { permissions: ['transactions.view', 'seller.manage'] },
        { token: manager.access },
      );
      expect(raised.status).toBe(403);
      expect(raised.body.code).toBe('permission_not_grantable');
      // holding a permission on another seller does not make it grantable here
      const other = await createSeller(t, superuser);
      await grant(t, superuser, other, manager, [...PERMISSIONS]);
      const elsewhere = await t.http.patch(
        `${accessesOf(s.sellerId)}/${granted.body.id}`,
        { permissions: ['transactions.void'] },
        { token: manager.access },
      );
      expect(elsewhere.status).toBe(403);
      // a superuser grants anything
      const bySuperuser = await t.http.patch(
        `${accessesOf(s.sellerId)}/${granted.body.id}`,
        { permissions: [...PERMISSIONS] },
        { token: superuser.access },
      );
      expect(bySuperuser.status).toBe(200);
    });

    it('takes away only permissions it holds: it cannot strip or delete someone who holds more', async () => {
      const manager = await createUser(t);
      await grant(t, superuser, s.sellerId, manager, ['accesses.manage', 'transactions.view']);
      const owner = await createUser(t);
      const ownerEntry = await grant(t, superuser, s.sellerId, owner, ['transactions.view', 'apikeys.manage']);
      const stripped = await t.http.patch(
        `${accessesOf(s.sellerId)}/${ownerEntry}`,
        { permissions: ['transactions.view'] },
        { token: manager.access },
      );
      expect(stripped.status).toBe(403);
      expect(stripped.body.code).toBe('permission_not_grantable');
      expect(stripped.body.message).toContain('"apikeys.manage"');
      const deleted = await t.http.delete(`${accessesOf(s.sellerId)}/${ownerEntry}`, { token: manager.access });
      expect(deleted.status).toBe(403);
      expect(deleted.body.code).toBe('permission_not_grantable');
      const me = await t.http.get('/user/me', { token: owner.access });
      expect(me.body.accesses).toEqual([{ seller: s.sellerId, permissions: ['transactions.view', 'apikeys.manage'] }]);

      // What it holds, it takes away: the permission, then the whole entry.
      const peer = await createUser(t);
      const peerEntry = await grant(t, superuser, s.sellerId, peer, ['transactions.view', 'accesses.manage']);
      const narrowed = await t.http.patch(
        `${accessesOf(s.sellerId)}/${peerEntry}`,
        { permissions: ['transactions.view'] },
        { token: manager.access },
      );
      expect(narrowed.status).toBe(200);
      expect((await t.http.delete(`${accessesOf(s.sellerId)}/${peerEntry}`, { token: manager.access })).status).toBe(
        204,
      );
      // A superuser takes away anything.
      expect((await t.http.delete(`${accessesOf(s.sellerId)}/${ownerEntry}`, { token: superuser.access })).status).toBe(
        204,
      );
    });
  });

  describe('commercial terms', () => {
    it('are superuser-only: seller.manage edits name and email, not rate_plan or developer_account', async () => {
      const own = await payingSeller(t, superuser); // a seller of its own: this test renames it
      const owner = await createUser(t);
      await grant(t, superuser, own.sellerId, owner, ['seller.manage']);
      const attacker = await createSeller(t, superuser, 'Elsewhere');
      for (const body of [
        { rate_plan: null },
        { split_plan: null },
        { developer_account: attacker },
        { split_participants: { Master: attacker } },
        { name: 'Renamed', rate_plan: own.ratePlanId },
      ]) {
        const res = await t.http.patch(`/sellers/${own.sellerId}`, body, { token: owner.access });
        expect({ body, status: res.status, code: res.body.code }).toEqual({
          body,
          status: 403,
          code: 'superuser_required',
        });
      }
      const seller = await t.http.get(`/sellers/${own.sellerId}`, { token: owner.access });
      expect(seller.body).toMatchObject({
        rate_plan: own.ratePlanId,
        split_plan: own.splitPlanId,
        developer_account: own.developer,
        split_participants: { Master: own.master },
      });
      const renamed = await t.http.patch(
        `/sellers/${own.sellerId}`,
        { name: 'Renamed', email: 'new@example.com' },
        { token: owner.access },
      );
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'Renamed', email: 'new@example.com' });
    });

    it('split plans are created by superusers only', async () => {
      const nobody = await createUser(t);
      const body = {
        name: 'Mine',
        rate_plan: s.ratePlanId,
        split_details: SPLIT_DETAILS,
        split_details_online: SPLIT_DETAILS_ONLINE,
      };
      const res = await t.http.post('/plans/plans/split', body, { token: nobody.access });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('superuser_required');
      expect((await t.http.post('/plans/plans/split', body, { token: superuser.access })).status).toBe(201);
    });
  });

  describe('sessions', () => {
    it("logout stops that session's access token at once, and only that session", async () => {
      const user = await createUser(t);
      const other = await login(t, user.email, user.password);
      const renewed = await t.http.post('/user/token/refresh', { refresh: user.refresh });
      expect((await t.http.get('/user/me', { token: user.access })).status).toBe(200);

      expect((await t.http.post('/user/logout', { refresh: user.refresh })).status).toBe(204);
      for (const token of [user.access, renewed.body.access]) {
        const res = await t.http.get('/user/me', { token });
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('token_revoked');
      }
      expect((await t.http.post('/user/token/refresh', { refresh: user.refresh })).status).toBe(401);
      expect((await t.http.get('/user/me', { token: other.access })).status).toBe(200);
    });
  });

  describe('users admin', () => {
    it('deactivating a user stops its tokens at once and login answers invalid_credentials; reactivating lets it back', async () => {
      const user = await createUser(t);
      const off = await t.http.patch(`/users/${user.id}`, { active: false }, { token: superuser.access });
      expect(off.status).toBe(200);
      expect(off.body).toMatchObject({ id: user.id, email: user.email, active: false, is_superuser: false });
      expect((await t.http.get('/user/me', { token: user.access })).status).toBe(401);
      expect((await t.http.post('/user/token/refresh', { refresh: user.refresh })).status).toBe(401);
      const login401 = await t.http.post('/user/login', { email: user.email, password: user.password });
      expect(login401.status).toBe(401);
      expect(login401.body.code).toBe('invalid_credentials');

      expect((await t.http.patch(`/users/${user.id}`, { active: true }, { token: superuser.access })).status).toBe(200);
      const session = await login(t, user.email, user.password);
      expect((await t.http.get('/user/me', { token: session.access })).status).toBe(200);
    });

    it('grants and revokes superuser, lists and searches users by e-mail in keyset pages, refuses self-demotion', async () => {
      const user = await createUser(t);
      const promoted = await t.http.patch(`/users/${user.id}`, { is_superuser: true }, { token: superuser.access });
      expect(promoted.body.is_superuser).toBe(true);
      expect((await t.http.get('/users', { token: user.access })).status).toBe(200);
      const demoted = await t.http.patch(`/users/${user.id}`, { is_superuser: false }, { token: superuser.access });
      expect(demoted.body.is_superuser).toBe(false);
      expect((await t.http.get('/users', { token: user.access })).status).toBe(403);

      const self = await t.http.patch(`/users/${superuser.id}`, { active: false }, { token: superuser.access });
      expect(self.status).toBe(403);

      const found = await t.http.get(`/users?search=${encodeURIComponent(user.email.toUpperCase())}`, {
        token: superuser.access,
      });
      expect(found.body.results.map((u: { id: string }) => u.id)).toEqual([user.id]);
      expect((await t.http.get('/users?search=%25', { token: superuser.access })).body.results).toEqual([]);
      const first = await t.http.get('/users?limit=2', { token: superuser.access });
      expect(first.body.results).toHaveLength(2);
      const second = await t.http.get(`/users?limit=2&cursor=${first.body.next_cursor}`, { token: superuser.access });
      expect(second.body.results[0].id).not.toBe(first.body.results[1].id);
      expect(second.body.results[0].created_at <= first.body.results[1].created_at).toBe(true);

      expect((await t.http.get(`/users/${user.id}`, { token: superuser.access })).body.email).toBe(user.email);
      expect(
        (await t.http.get('/users/7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11', { token: superuser.access })).status,
      ).toBe(404);
      const bad = await t.http.patch(`/users/${user.id}`, { active: 'no' }, { token: superuser.access });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.active).toEqual(['must be true or false']);
    });
  });
});
