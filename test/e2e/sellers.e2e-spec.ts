import { createSeller, createUser, grant, TestUser, validCnpj } from '../support/identity';
import { payingSeller } from '../support/payments';
import { changeBehindTheApp, startTestApp, TestApp } from '../support/test-app';

/** Sellers, sub-accounts and the access table (API.md section 3). */
describe('sellers', () => {
  let t: TestApp;
  let superuser: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
  });
  afterAll(() => t.close());

  it('creates a seller with a CPF or CNPJ whose check digits are right, stored as digits', async () => {
    const cnpj = validCnpj();
    const formatted = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
    const res = await t.http.post(
      '/sellers',
      { name: 'Loja', document: formatted, email: 'Loja@Example.com' },
      { token: superuser.access },
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Loja',
      document: cnpj,
      document_type: 'cnpj',
      email: 'loja@example.com',
      developer_account: null,
      split_participants: {},
    });
    const cpf = await t.http.post(
      '/sellers',
      { name: 'Pessoa', document: '529.982.247-25', email: 'p@example.com' },
      { token: superuser.access },
    );
    expect(cpf.body).toMatchObject({ document: '52998224725', document_type: 'cpf' });

    const duplicate = await t.http.post(
      '/sellers',
      { name: 'Again', document: cnpj, email: 'a@example.com' },
      { token: superuser.access },
    );
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.code).toBe('seller_exists');
  });

  it.each(['52998224724', '11111111111', '1122233300018', '12345678000100', 'abc'])(
    'refuses the document %s',
    async (document) => {
      const res = await t.http.post(
        '/sellers',
        { name: 'X', document, email: 'x@example.com' },
        { token: superuser.access },
      );
      expect(res.status).toBe(400);
      expect(res.body.errors.document).toBeDefined();
    },
  );

  it('edits name, e-mail, developer account and split participants, which must be existing unified accounts', async () => {
    const seller = await createSeller(t, superuser);
    const partner = await createSeller(t, superuser, 'Master');
    const sub = (await t.http.post(`/sellers/${seller}/subaccounts`, { name: 'Agente' }, { token: superuser.access }))
      .body.id;
    const res = await t.http.patch(
      `/sellers/${seller}`,
      { name: 'Renamed', developer_account: partner, split_participants: { Master: partner, Agente: sub } },
      { token: superuser.access },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      developer_account: partner,
      split_participants: { Master: partner, Agente: sub },
    });

    const unknown = '3b0c3f1e-0d1a-4d7a-9b4e-6a6f1f0e2c33';
    const bad = await t.http.patch(
      `/sellers/${seller}`,
      { developer_account: unknown, split_participants: { Master: unknown, Agente: 'nope' } },
      { token: superuser.access },
    );
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['split_participants.Agente']);
    const bad2 = await t.http.patch(
      `/sellers/${seller}`,
      { developer_account: unknown, split_participants: { Master: unknown } },
      { token: superuser.access },
    );
    expect(Object.keys(bad2.body.errors).sort()).toEqual(['developer_account', 'split_participants.Master']);
    // The Programador share goes to developer_account: a participant of that label would be ignored.
    const developer = await t.http.patch(
      `/sellers/${seller}`,
      { split_participants: { Programador: partner } },
      { token: superuser.access },
    );
    expect(developer.status).toBe(400);
    expect(developer.body.errors).toEqual({
      'split_participants.Programador': ['the Programador share goes to developer_account; set that instead'],
    });
    const cleared = await t.http.patch(`/sellers/${seller}`, { developer_account: null }, { token: superuser.access });
    expect(cleared.body.developer_account).toBeNull();
    expect(
      (await t.http.patch(`/sellers/${seller}`, { document: '52998224725' }, { token: superuser.access })).status,
    ).toBe(400);
    expect((await t.http.patch(`/sellers/${seller}`, { name: null }, { token: superuser.access })).status).toBe(400);
  });

  it('keeps the ids of its commercial terms in one form whatever their case, and moves no seller onto an inactive rate plan', async () => {
    const paying = await payingSeller(t, superuser);
    const path = `/sellers/${paying.sellerId}`;
    const patch = (body: object) => t.http.patch(path, body, { token: superuser.access });
    const audited = async () =>
      (
        await t.db.query(
          `SELECT changes FROM audit_log WHERE seller_id = $1 AND action = 'seller.commercial_terms_changed' ORDER BY seq`,
          [paying.sellerId],
        )
      ).rows.map((row: { changes: unknown }) => row.changes);
    const before = await audited();

    // The terms it has, spelt in upper case: nothing changes, nothing is audited.
    const same = await patch({
      rate_plan: paying.ratePlanId.toUpperCase(),
      developer_account: paying.developer.toUpperCase(),
      split_participants: { Master: paying.master.toUpperCase() },
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({
      rate_plan: paying.ratePlanId,
      developer_account: paying.developer,
      split_participants: { Master: paying.master },
    });
    expect(await audited()).toEqual(before);

    // A participant sent in upper case is stored, answered and audited as the id it is.
    const sub = (await t.http.post(`${path}/subaccounts`, { name: 'Agente' }, { token: superuser.access })).body.id;
    const added = await patch({ split_participants: { Master: paying.master, Agente: sub.toUpperCase() } });
    expect(added.body.split_participants).toEqual({ Master: paying.master, Agente: sub });
    expect((await t.http.get(path, { token: superuser.access })).body.split_participants).toEqual({
      Master: paying.master,
      Agente: sub,
    });
    expect((await audited()).slice(before.length)).toEqual([
      { split_participants: { from: { Master: paying.master }, to: { Master: paying.master, Agente: sub } } },
    ]);

    // An inactive rate plan takes no seller; one already on it keeps it.
    const { rows } = await t.db.query('SELECT id FROM rate_plans WHERE id <> $1 AND active LIMIT 1', [
      paying.ratePlanId,
    ]);
    const other: string = rows[0].id;
    await changeBehindTheApp(t, 'UPDATE rate_plans SET active = false WHERE id = $1', [other], 'rate_plans:');
    try {
      const moved = await patch({ rate_plan: other, split_plan: null });
      expect(moved.status).toBe(400);
      expect(moved.body.code).toBe('rate_plan_inactive');
      const stays = await createSeller(t, superuser);
      await t.db.query('UPDATE sellers SET rate_plan_id = $1 WHERE id = $2', [other, stays]);
      const kept = await t.http.patch(`/sellers/${stays}`, { rate_plan: other }, { token: superuser.access });
      expect(kept.status).toBe(200);
      expect(kept.body.rate_plan).toBe(other);
    } finally {
      await changeBehindTheApp(t, 'UPDATE rate_plans SET active = true WHERE id = $1', [other], 'rate_plans:');
    }
  });

  it('a PATCH that changes nothing (empty, or the values the seller has) writes nothing: updated_at stays', async () => {
    const seller = await createSeller(t, superuser);
    const before = (await t.http.get(`/sellers/${seller}`, { token: superuser.access })).body;
    for (const body of [{}, { name: before.name, email: before.email.toUpperCase(), split_participants: {} }]) {
      const res = await t.http.patch(`/sellers/${seller}`, body, { token: superuser.access });
      expect(res.status).toBe(200);
      expect(res.body.updated_at).toBe(before.updated_at);
    }
    const renamed = await t.http.patch(`/sellers/${seller}`, { name: 'Another name' }, { token: superuser.access });
    expect(renamed.body.updated_at > before.updated_at).toBe(true);
  });

  it('creates and lists sub-accounts of the seller only', async () => {
    const seller = await createSeller(t, superuser);
    const other = await createSeller(t, superuser);
    const created = await t.http.post(
      `/sellers/${seller}/subaccounts`,
      { name: 'Filial' },
      { token: superuser.access },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      seller,
      name: 'Filial',
      created_at: expect.any(String),
    });
    expect(created.body).toHaveProperty('virtual_account');
    await t.http.post(`/sellers/${other}/subaccounts`, { name: 'Outra' }, { token: superuser.access });
    const list = await t.http.get(`/sellers/${seller}/subaccounts`, { token: superuser.access });
    expect(list.body.results.map((s: { name: string }) => s.name)).toEqual(['Filial']);
    expect(
      (await t.http.post(`/sellers/${seller}/subaccounts`, { name: '' }, { token: superuser.access })).status,
    ).toBe(400);
  });

  it('grants, lists, changes and revokes accesses; the permissions take effect at once', async () => {
    const seller = await createSeller(t, superuser);
    const manager = await createUser(t);
    // a manager grants only what it holds itself (API.md section 3)
    await grant(t, superuser, seller, manager, ['accesses.manage', 'transactions.view', 'seller.manage']);
    const clerk = await createUser(t);

    expect((await t.http.get(`/sellers/${seller}`, { token: clerk.access })).status).toBe(404);
    // The user is named one way: by id or by e-mail, not neither nor both.
    for (const [body, message] of [
      [{}, 'is required when email is not given'],
      [{ user: clerk.id, email: clerk.email }, 'cannot be given with email: name the user one way'],
    ] as const) {
      const refused = await t.http.post(
        `/sellers/${seller}/accesses`,
        { ...body, permissions: ['transactions.view'] },
        { token: manager.access },
      );
      expect([refused.status, refused.body.errors, refused.body.message]).toEqual([
        400,
        { user: [message] },
        `Invalid request: user ${message}.`,
      ]);
    }
    const granted = await t.http.post(
      `/sellers/${seller}/accesses`,
      { email: clerk.email.toUpperCase(), permissions: ['transactions.view'] },
      { token: manager.access },
    );
    expect(granted.status).toBe(201);
    expect(granted.body).toMatchObject({ seller, user: clerk.id, permissions: ['transactions.view'] });
    expect((await t.http.get(`/sellers/${seller}`, { token: clerk.access })).status).toBe(200);
    expect((await t.http.patch(`/sellers/${seller}`, { name: 'x' }, { token: clerk.access })).status).toBe(403);
    // The same permissions again write nothing: updated_at stays.
    const same = await t.http.patch(
      `/sellers/${seller}/accesses/${granted.body.id}`,
      { permissions: ['transactions.view'] },
      { token: manager.access },
    );
    expect([same.status, same.body.updated_at]).toEqual([200, granted.body.updated_at]);

    const again = await t.http.post(
      `/sellers/${seller}/accesses`,
      { user: clerk.id, permissions: [] },
      { token: manager.access },
    );
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('access_exists');

    const changed = await t.http.patch(
      `/sellers/${seller}/accesses/${granted.body.id}`,
      { permissions: ['seller.manage'] },
      { token: manager.access },
    );
    expect(changed.body.permissions).toEqual(['seller.manage']);
    expect((await t.http.patch(`/sellers/${seller}`, { name: 'Now allowed' }, { token: clerk.access })).status).toBe(
      200,
    );

    const me = await t.http.get('/user/me', { token: clerk.access });
    expect(me.body.accesses).toEqual([{ seller, permissions: ['seller.manage'] }]);

    const list = await t.http.get(`/sellers/${seller}/accesses`, { token: manager.access });
    expect(list.body.results).toHaveLength(2);

    expect(
      (await t.http.delete(`/sellers/${seller}/accesses/${granted.body.id}`, { token: manager.access })).status,
    ).toBe(204);
    expect((await t.http.get(`/sellers/${seller}`, { token: clerk.access })).status).toBe(404);
    expect(
      (await t.http.delete(`/sellers/${seller}/accesses/${granted.body.id}`, { token: manager.access })).status,
    ).toBe(404);
  });

  it('validates access grants: one of user or email, known user, known permission codes', async () => {
    const seller = await createSeller(t, superuser);
    const user = await createUser(t);
    const both = await t.http.post(
      `/sellers/${seller}/accesses`,
      { user: user.id, email: user.email, permissions: [] },
      { token: superuser.access },
    );
    expect(both.status).toBe(400);
    const unknown = await t.http.post(
      `/sellers/${seller}/accesses`,
      { email: 'ghost@example.com', permissions: [] },
      { token: superuser.access },
    );
    expect(unknown.body.errors.email).toEqual(['must name an existing user']);
    const nullUser = await t.http.post(
      `/sellers/${seller}/accesses`,
      { user: null, permissions: [] },
      { token: superuser.access },
    );
    expect(nullUser.status).toBe(400);
    const nullEmail = await t.http.post(
      `/sellers/${seller}/accesses`,
      { email: null, permissions: [] },
      { token: superuser.access },
    );
    expect(nullEmail.status).toBe(400);
    const badCode = await t.http.post(
      `/sellers/${seller}/accesses`,
      { user: user.id, permissions: ['everything'] },
      { token: superuser.access },
    );
    expect(badCode.status).toBe(400);
    expect(badCode.body.errors.permissions).toBeDefined();
  });

  it("does not reach another seller's access entry through this seller's path", async () => {
    const a = await createSeller(t, superuser);
    const b = await createSeller(t, superuser);
    const entry = await grant(t, superuser, b, await createUser(t), ['transactions.view']);
    expect(
      (await t.http.patch(`/sellers/${a}/accesses/${entry}`, { permissions: [] }, { token: superuser.access })).status,
    ).toBe(404);
    expect((await t.http.delete(`/sellers/${a}/accesses/${entry}`, { token: superuser.access })).status).toBe(404);
  });
});
