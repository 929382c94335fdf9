import { randomUUID } from 'node:crypto';
import { createUser, TestUser } from '../../test/support/identity';
import { asRequestOf, auditOf, newTestService, userPrincipal } from '../../test/support/service-test';
import { startTestApp, TestApp } from '../../test/support/test-app';
import type { UserPrincipal } from './principal';
import { UsersAdminService } from './users-admin.service';

describe('UsersAdminService', () => {
  let t: TestApp;
  let service: UsersAdminService;
  let admin: UserPrincipal;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    service = newTestService(t, UsersAdminService);
    admin = await userPrincipal(t, await createUser(t, { superuser: true }));
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    user = await createUser(t);
  });

  const stored = async (id: string) =>
    (await t.db.query('SELECT active, is_superuser FROM users WHERE id = $1', [id])).rows[0];
  const liveSessions = async (id: string) =>
    Number(
      (await t.db.query('SELECT count(*) FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL', [id])).rows[0]
        .count,
    );
  const update = (id: string, changes: { active?: boolean; is_superuser?: boolean }, by = admin) =>
    asRequestOf(by, () => service.update(by, id, changes));

  it('deactivating a user ends its sessions and writes one audit row with the actor', async () => {
    expect(await liveSessions(user.id)).toBe(1);

    const answered = await update(user.id, { active: false });

    expect(answered).toMatchObject({ id: user.id, active: false, is_superuser: false });
    expect(await stored(user.id)).toEqual({ active: false, is_superuser: false });
    expect(await liveSessions(user.id)).toBe(0);
    expect(await auditOf(t, user.id)).toEqual([
      {
        action: 'user.deactivated',
        actor_kind: 'user',
        actor_id: admin.id,
        seller_id: null,
        changes: { active: { from: true, to: false } },
        request_id: 'req-service-test',
      },
    ]);
  });

  it('activating a user keeps its sessions', async () => {
    await update(user.id, { active: false });
    await t.db.query(
      "INSERT INTO refresh_tokens (jti, user_id, expires_at) VALUES ($1, $2, now() + interval '1 day')",
      [randomUUID(), user.id],
    );

    await update(user.id, { active: true });

    expect(await stored(user.id)).toMatchObject({ active: true });
    expect(await liveSessions(user.id)).toBe(1);
    expect((await auditOf(t, user.id)).map((a) => a.action)).toEqual(['user.deactivated', 'user.activated']);
  });

  it('writes one audit row per changed field, in one change', async () => {
    await update(user.id, { is_superuser: true, active: false });

    expect(await stored(user.id)).toEqual({ active: false, is_superuser: true });
    expect((await auditOf(t, user.id)).map((a) => [a.action, a.changes])).toEqual([
      ['user.deactivated', { active: { from: true, to: false } }],
      ['user.superuser_granted', { is_superuser: { from: false, to: true } }],
    ]);
  });

  it('writes and audits nothing when the values asked are the current ones', async () => {
    const before = (await t.db.query('SELECT updated_at FROM users WHERE id = $1', [user.id])).rows[0].updated_at;

    const answered = await update(user.id, { active: true, is_superuser: false });

    expect(answered).toMatchObject({ active: true, is_superuser: false });
    expect((await t.db.query('SELECT updated_at FROM users WHERE id = $1', [user.id])).rows[0].updated_at).toEqual(
      before,
    );
    expect(await auditOf(t, user.id)).toEqual([]);
    expect(await liveSessions(user.id)).toBe(1);
  });

  it.each([{ active: false }, { is_superuser: false }])(
    'refuses a superuser %j on their own account, changing nothing',
    async (changes) => {
      await expect(update(admin.id, changes)).rejects.toMatchObject({
        status: 403,
        code: 'own_account_not_changeable',
      });
      expect(await stored(admin.id)).toEqual({ active: true, is_superuser: true });
      expect(await auditOf(t, admin.id)).toEqual([]);
    },
  );

  it('answers 404 for an unknown user', async () => {
    await expect(update(randomUUID(), { active: false })).rejects.toMatchObject({
      status: 404,
      code: 'user_not_found',
    });
  });

  it('gets a user and lists users by a part of their e-mail, in any letter case', async () => {
    expect(await service.get(user.id)).toMatchObject({ id: user.id, email: user.email, active: true });
    await expect(service.get(randomUUID())).rejects.toMatchObject({ code: 'user_not_found' });

    const page = await service.list({ limit: 10, descending: false, after: null }, user.email.toUpperCase());
    expect(page.results.map((u) => u.id)).toEqual([user.id]);
  });
});
