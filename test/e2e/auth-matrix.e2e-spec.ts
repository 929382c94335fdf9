import {
  RouteCase,
  UNAUTHENTICATED,
  matrixWorld,
  MatrixWorld,
  sellerRoute,
  itAnswersEveryCaller,
} from '../support/auth-matrix';
import { createApiKey, createUser, grant, validCnpj } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The auth matrix of every route of the identity and access area: each kind of caller
 * against each route, with the status it must get. Nothing may answer with another
 * seller's data.
 */
describe('auth matrix: identity and access routes', () => {
  let t: TestApp;
  let w: MatrixWorld;

  beforeAll(async () => {
    t = await startTestApp();
    w = await matrixWorld(t);
  });
  afterAll(() => t.close());
  const unauthenticated = UNAUTHENTICATED;
  const anyUser = (ok: number) => ({
    ...unauthenticated,
    noAccess: ok,
    noPermission: ok,
    permitted: ok,
    superuser: ok,
    apiKey: 403,
    otherSellerKey: 403,
  });
  const superOnly = (ok: number) => ({
    ...unauthenticated,
    noAccess: 403,
    noPermission: 403,
    permitted: 403,
    superuser: ok,
    apiKey: 403,
    otherSellerKey: 403,
  });
  const sellerView = (ok: number) => ({
    ...unauthenticated,
    noAccess: 404,
    noPermission: ok,
    permitted: ok,
    superuser: ok,
    apiKey: 403,
    otherSellerKey: 403,
  });
  const sellerPermission = (ok: number) => sellerRoute(ok);
  // API key routes answer 400 'Seller not found.' to a caller who cannot see the seller (spec 4.1)
  const keyRoutes = (ok: number) => ({
    ...unauthenticated,
    noAccess: 400,
    noPermission: 403,
    permitted: ok,
    superuser: ok,
    apiKey: 403,
    otherSellerKey: 403,
  });

  const freshAccess = async () => grant(t, w.superuser, w.sellerA, await createUser(t), ['transactions.view']);
  const freshKey = async () => (await createApiKey(t, w.superuser.access, w.sellerA)).id;

  const routes: Record<string, RouteCase> = {
    'GET /user/me': { method: 'GET', request: () => ({ path: '/user/me' }), expect: anyUser(200) },
    'POST /sellers': {
      method: 'POST',
      request: () => ({ path: '/sellers', body: { name: 'New', document: validCnpj(), email: 'n@example.com' } }),
      expect: superOnly(201),
    },
    'GET /sellers': { method: 'GET', request: () => ({ path: '/sellers' }), expect: anyUser(200) },
    'GET /sellers/{id}': { method: 'GET', request: () => ({ path: `/sellers/${w.sellerA}` }), expect: sellerView(200) },
    'PATCH /sellers/{id}': {
      method: 'PATCH',
      request: () => ({ path: `/sellers/${w.sellerA}`, body: { name: 'Seller A' } }),
      expect: sellerPermission(200),
    },
    'GET /sellers/{id}/subaccounts': {
      method: 'GET',
      request: () => ({ path: `/sellers/${w.sellerA}/subaccounts` }),
      expect: sellerView(200),
    },
    'POST /sellers/{id}/subaccounts': {
      method: 'POST',
      request: () => ({ path: `/sellers/${w.sellerA}/subaccounts`, body: { name: 'Branch' } }),
      expect: sellerPermission(201),
    },
    'GET /sellers/{id}/accesses': {
      method: 'GET',
      request: () => ({ path: `/sellers/${w.sellerA}/accesses` }),
      expect: sellerPermission(200),
    },
    'POST /sellers/{id}/accesses': {
      method: 'POST',
      request: async () => ({
        path: `/sellers/${w.sellerA}/accesses`,
        body: { user: (await createUser(t)).id, permissions: ['transactions.view'] },
      }),
      expect: sellerPermission(201),
    },
    'PATCH /sellers/{id}/accesses/{access_id}': {
      method: 'PATCH',
      request: async () => ({
        path: `/sellers/${w.sellerA}/accesses/${await freshAccess()}`,
        body: { permissions: ['transactions.create'] },
      }),
      expect: sellerPermission(200),
    },
    'DELETE /sellers/{id}/accesses/{access_id}': {
      method: 'DELETE',
      request: async () => ({ path: `/sellers/${w.sellerA}/accesses/${await freshAccess()}` }),
      expect: sellerPermission(204),
    },
    'POST /integrations/apikeys/{seller_id}/apikeys': {
      method: 'POST',
      request: () => ({ path: `/integrations/apikeys/${w.sellerA}/apikeys`, body: { label: 'k', description: '' } }),
      expect: keyRoutes(201),
    },
    'GET /integrations/apikeys/{seller_id}/apikeys': {
      method: 'GET',
      request: () => ({ path: `/integrations/apikeys/${w.sellerA}/apikeys` }),
      expect: keyRoutes(200),
    },
    'GET /integrations/apikeys/{seller_id}/apikeys/{id}': {
      method: 'GET',
      request: async () => ({ path: `/integrations/apikeys/${w.sellerA}/apikeys/${await freshKey()}` }),
      expect: keyRoutes(200),
    },
    'PATCH /integrations/apikeys/{seller_id}/apikeys/{id}': {
      method: 'PATCH',
      request: async () => ({
        path: `/integrations/apikeys/${w.sellerA}/apikeys/${await freshKey()}`,
        body: { label: 'renamed' },
      }),
      expect: keyRoutes(200),
    },
    'DELETE /integrations/apikeys/{seller_id}/apikeys/{id}': {
      method: 'DELETE',
      request: async () => ({ path: `/integrations/apikeys/${w.sellerA}/apikeys/${await freshKey()}` }),
      expect: keyRoutes(204),
    },
    // commercial terms are the platform's: superusers only, even with seller.manage (API.md section 3)
    'PATCH /sellers/{id} with commercial terms': {
      method: 'PATCH',
      request: () => ({ path: `/sellers/${w.sellerA}`, body: { developer_account: w.sellerA } }),
      expect: { ...sellerPermission(200), permitted: 403 },
    },
    'GET /users': { method: 'GET', request: () => ({ path: '/users' }), expect: superOnly(200) },
    'GET /users/{id}': {
      method: 'GET',
      request: () => ({ path: `/users/${w.permittedUser.id}` }),
      expect: superOnly(200),
    },
    'PATCH /users/{id}': {
      method: 'PATCH',
      request: async () => ({ path: `/users/${(await createUser(t)).id}`, body: { is_superuser: false } }),
      expect: superOnly(200),
    },
    'GET /audit': { method: 'GET', request: () => ({ path: '/audit' }), expect: superOnly(200) },
  };

  itAnswersEveryCaller(routes, () => ({ t, callers: w.callers }));

  it('never lists another seller to a user without access to it', async () => {
    const res = await t.http.get('/sellers', { token: w.callers.noAccess });
    expect(res.status).toBe(200);
    expect(res.body.results.map((s: { id: string }) => s.id)).toEqual([w.sellerB]);
    const all = await t.http.get('/sellers?limit=100', { token: w.callers.superuser });
    expect(all.body.results.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([w.sellerA, w.sellerB]));
  });

  it('answers an unknown seller with 404, and 400 "Seller not found." on the API key routes', async () => {
    const unknown = '7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11';
    expect((await t.http.get(`/sellers/${unknown}`, { token: w.callers.superuser })).status).toBe(404);
    expect((await t.http.get(`/sellers/not-a-uuid`, { token: w.callers.superuser })).status).toBe(404);
    for (const caller of ['superuser', 'permitted', 'noAccess'] as const) {
      const res = await t.http.post(
        `/integrations/apikeys/${unknown}/apikeys`,
        { label: 'x', description: '' },
        { token: w.callers[caller] },
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Seller not found.');
      expect(res.body.code).toBe('seller_not_found');
    }
    const malformed = await t.http.get('/integrations/apikeys/nope/apikeys', { token: w.callers.superuser });
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toBe('Seller not found.');
  });

  it('lets accesses.manage grant only what it holds, never on its own entry; superusers grant anything', async () => {
    const manager = await createUser(t);
    const own = await grant(t, w.superuser, w.sellerA, manager, ['accesses.manage', 'transactions.view']);
    const target = await grant(t, w.superuser, w.sellerA, await createUser(t), ['transactions.view']);
    const cases: Array<[string, string, object | undefined, number, string?]> = [
      [
        'PATCH',
        own,
        { permissions: ['accesses.manage', 'transactions.view', 'seller.manage'] },
        403,
        'own_access_not_changeable',
      ],
      ['DELETE', own, undefined, 403, 'own_access_not_changeable'],
      ['PATCH', target, { permissions: ['transactions.view', 'transactions.void'] }, 403, 'permission_not_grantable'],
      ['PATCH', target, { permissions: [] }, 200],
      ['PATCH', target, { permissions: ['transactions.view'] }, 200],
    ];
    for (const [method, id, body, status, code] of cases) {
      const res = await t.http.request(method, `/sellers/${w.sellerA}/accesses/${id}`, { body, token: manager.access });
      expect({ method, body, status: res.status, code: res.body?.code }).toEqual({
        method,
        body,
        status,
        code: code ?? undefined,
      });
    }
    const fresh = await createUser(t);
    const refused = await t.http.post(
      `/sellers/${w.sellerA}/accesses`,
      { user: fresh.id, permissions: ['apikeys.manage'] },
      { token: manager.access },
    );
    expect(refused.body.code).toBe('permission_not_grantable');
    const bySuperuser = await t.http.patch(
      `/sellers/${w.sellerA}/accesses/${own}`,
      { permissions: ['accesses.manage', 'apikeys.manage'] },
      { token: w.superuser.access },
    );
    expect(bySuperuser.status).toBe(200);
    // the change applies to the manager's next request
    const nowAllowed = await t.http.post(
      `/sellers/${w.sellerA}/accesses`,
      { user: fresh.id, permissions: ['apikeys.manage'] },
      { token: manager.access },
    );
    expect(nowAllowed.status).toBe(201);
  });

  it('tells an API key where it is not allowed, and a refresh token used as access why it failed', async () => {
    const key = await t.http.get('/user/me', { token: w.callers.apiKey });
    expect(key.body.code).toBe('api_key_not_allowed');
    const refresh = await t.http.get('/user/me', { token: w.callers.refreshAsAccess });
    expect(refresh.body.code).toBe('invalid_token');
    const expired = await t.http.get('/user/me', { token: w.callers.expired });
    expect(expired.body.code).toBe('token_expired');
    const inactive = await t.http.get('/user/me', { token: w.callers.inactiveKey });
    expect(inactive.body.code).toBe('api_key_inactive');
  });
});
