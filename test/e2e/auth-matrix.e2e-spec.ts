import { HttpResponse } from '../support/http';
import {
  CallerName,
  Callers,
  createApiKey,
  createSeller,
  createUser,
  expiredAccessToken,
  grant,
  TestUser,
  validCnpj,
} from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';
import { PERMISSIONS } from '../../src/auth/permissions';

/**
 * The auth matrix of every route of the identity and access area: each kind of caller
 * against each route, with the status it must get. Nothing may answer with another
 * seller's data.
 */
describe('auth matrix: identity and access routes', () => {
  let t: TestApp;
  let superuser: TestUser;
  let sellerA: string;
  let sellerB: string;
  let callers: Callers;
  let permittedUser: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    sellerA = await createSeller(t, superuser, 'Seller A');
    sellerB = await createSeller(t, superuser, 'Seller B');
    const noAccess = await createUser(t);
    await grant(t, superuser, sellerB, noAccess, [...PERMISSIONS]); // full rights, but on another seller
    const noPermission = await createUser(t);
    await grant(t, superuser, sellerA, noPermission, ['events.manage']);
    permittedUser = await createUser(t);
    await grant(t, superuser, sellerA, permittedUser, [...PERMISSIONS]);
    const deleted = await createApiKey(t, superuser.access, sellerA);
    await t.http.delete(`/integrations/apikeys/${sellerA}/apikeys/${deleted.id}`, { token: superuser.access });
    callers = {
      none: undefined,
      malformed: 'not-a-token',
      expired: await expiredAccessToken(permittedUser),
      refreshAsAccess: permittedUser.refresh,
      noAccess: noAccess.access,
      noPermission: noPermission.access,
      permitted: permittedUser.access,
      superuser: superuser.access,
      apiKey: (await createApiKey(t, superuser.access, sellerA)).key,
      inactiveKey: (await createApiKey(t, superuser.access, sellerA, false)).key,
      deletedKey: deleted.key,
      otherSellerKey: (await createApiKey(t, superuser.access, sellerB)).key,
    };
  });
  afterAll(() => t.close());

  interface RouteCase {
    method: string;
    /** Builds the request for one call: routes that consume what they act on get a fresh target. */
    request: () => Promise<{ path: string; body?: unknown }> | { path: string; body?: unknown };
    expect: Partial<Record<CallerName, number>>;
  }

  const unauthenticated = { none: 401, malformed: 401, expired: 401, refreshAsAccess: 401, inactiveKey: 401, deletedKey: 401 };
  const anyUser = (ok: number) => ({ ...unauthenticated, noAccess: ok, noPermission: ok, permitted: ok, superuser: ok, apiKey: 403, otherSellerKey: 403 });
  const superOnly = (ok: number) => ({ ...unauthenticated, noAccess: 403, noPermission: 403, permitted: 403, superuser: ok, apiKey: 403, otherSellerKey: 403 });
  const sellerView = (ok: number) => ({ ...unauthenticated, noAccess: 404, noPermission: ok, permitted: ok, superuser: ok, apiKey: 403, otherSellerKey: 403 });
  const sellerPermission = (ok: number) => ({ ...unauthenticated, noAccess: 404, noPermission: 403, permitted: ok, superuser: ok, apiKey: 403, otherSellerKey: 403 });
  const keyRoutes = (ok: number) => ({ ...unauthenticated, noAccess: 403, noPermission: 403, permitted: ok, superuser: ok, apiKey: 403, otherSellerKey: 403 });

  const freshAccess = async () => grant(t, superuser, sellerA, await createUser(t), ['transactions.view']);
  const freshKey = async () => (await createApiKey(t, superuser.access, sellerA)).id;

  const routes: Record<string, RouteCase> = {
    'GET /user/me': { method: 'GET', request: () => ({ path: '/user/me' }), expect: anyUser(200) },
    'POST /sellers': {
      method: 'POST',
      request: () => ({ path: '/sellers', body: { name: 'New', document: validCnpj(), email: 'n@example.com' } }),
      expect: superOnly(201),
    },
    'GET /sellers': { method: 'GET', request: () => ({ path: '/sellers' }), expect: anyUser(200) },
    'GET /sellers/{id}': { method: 'GET', request: () => ({ path: `/sellers/${sellerA}` }), expect: sellerView(200) },
    'PATCH /sellers/{id}': {
      method: 'PATCH',
      request: () => ({ path: `/sellers/${sellerA}`, body: { name: 'Seller A' } }),
      expect: sellerPermission(200),
    },
    'GET /sellers/{id}/subaccounts': { method: 'GET', request: () => ({ path: `/sellers/${sellerA}/subaccounts` }), expect: sellerView(200) },
    'POST /sellers/{id}/subaccounts': {
      method: 'POST',
      request: () => ({ path: `/sellers/${sellerA}/subaccounts`, body: { name: 'Branch' } }),
      expect: sellerPermission(201),
    },
    'GET /sellers/{id}/accesses': { method: 'GET', request: () => ({ path: `/sellers/${sellerA}/accesses` }), expect: sellerPermission(200) },
    'POST /sellers/{id}/accesses': {
      method: 'POST',
      request: async () => ({ path: `/sellers/${sellerA}/accesses`, body: { user: (await createUser(t)).id, permissions: ['transactions.view'] } }),
      expect: sellerPermission(201),
    },
    'PATCH /sellers/{id}/accesses/{access_id}': {
      method: 'PATCH',
      request: async () => ({ path: `/sellers/${sellerA}/accesses/${await freshAccess()}`, body: { permissions: ['transactions.create'] } }),
      expect: sellerPermission(200),
    },
    'DELETE /sellers/{id}/accesses/{access_id}': {
      method: 'DELETE',
      request: async () => ({ path: `/sellers/${sellerA}/accesses/${await freshAccess()}` }),
      expect: sellerPermission(204),
    },
    'POST /integrations/apikeys/{seller_id}/apikeys': {
      method: 'POST',
      request: () => ({ path: `/integrations/apikeys/${sellerA}/apikeys`, body: { label: 'k', description: '' } }),
      expect: keyRoutes(201),
    },
    'GET /integrations/apikeys/{seller_id}/apikeys': {
      method: 'GET',
      request: () => ({ path: `/integrations/apikeys/${sellerA}/apikeys` }),
      expect: keyRoutes(200),
    },
    'GET /integrations/apikeys/{seller_id}/apikeys/{id}': {
      method: 'GET',
      request: async () => ({ path: `/integrations/apikeys/${sellerA}/apikeys/${await freshKey()}` }),
      expect: keyRoutes(200),
    },
    'PATCH /integrations/apikeys/{seller_id}/apikeys/{id}': {
      method: 'PATCH',
      request: async () => ({ path: `/integrations/apikeys/${sellerA}/apikeys/${await freshKey()}`, body: { label: 'renamed' } }),
      expect: keyRoutes(200),
    },
    'DELETE /integrations/apikeys/{seller_id}/apikeys/{id}': {
      method: 'DELETE',
      request: async () => ({ path: `/integrations/apikeys/${sellerA}/apikeys/${await freshKey()}` }),
      expect: keyRoutes(204),
    },
  };

  const callerNames: CallerName[] = [
    'none',
    'malformed',
    'expired',
    'refreshAsAccess',
    'noAccess',
    'noPermission',
    'permitted',
    'superuser',
    'apiKey',
    'inactiveKey',
    'deletedKey',
    'otherSellerKey',
  ];

  for (const [name, route] of Object.entries(routes)) {
    it(`${name}: every kind of caller gets its status`, async () => {
      const got: Record<string, number> = {};
      const want: Record<string, number> = {};
      for (const caller of callerNames) {
        const expected = route.expect[caller];
        if (expected === undefined) throw new Error(`${name}: no expectation for ${caller}`);
        const { path, body } = await route.request();
        const res: HttpResponse = await t.http.request(route.method, path, { body, token: callers[caller] });
        got[caller] = res.status;
        want[caller] = expected;
        if (res.status >= 400) {
          expect(res.body).toMatchObject({ statusCode: res.status, code: expect.any(String), request_id: expect.any(String) });
        }
        if (res.status === 401) expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
      expect(got).toEqual(want);
    });
  }

  it('never lists another seller to a user without access to it', async () => {
    const res = await t.http.get('/sellers', { token: callers.noAccess });
    expect(res.status).toBe(200);
    expect(res.body.results.map((s: { id: string }) => s.id)).toEqual([sellerB]);
    const all = await t.http.get('/sellers?limit=100', { token: callers.superuser });
    expect(all.body.results.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([sellerA, sellerB]));
  });

  it('answers an unknown seller with 404, and 400 "Seller not found." on the API key routes', async () => {
    const unknown = '7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11';
    expect((await t.http.get(`/sellers/${unknown}`, { token: callers.superuser })).status).toBe(404);
    expect((await t.http.get(`/sellers/not-a-uuid`, { token: callers.superuser })).status).toBe(404);
    for (const caller of ['superuser', 'permitted', 'noAccess'] as const) {
      const res = await t.http.post(`/integrations/apikeys/${unknown}/apikeys`, { label: 'x', description: '' }, { token: callers[caller] });
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Seller not found.');
      expect(res.body.code).toBe('seller_not_found');
    }
    const malformed = await t.http.get('/integrations/apikeys/nope/apikeys', { token: callers.superuser });
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toBe('Seller not found.');
  });

  it('tells an API key where it is not allowed, and a refresh token used as access why it failed', async () => {
    const key = await t.http.get('/user/me', { token: callers.apiKey });
    expect(key.body.code).toBe('api_key_not_allowed');
    const refresh = await t.http.get('/user/me', { token: callers.refreshAsAccess });
    expect(refresh.body.code).toBe('invalid_token');
    const expired = await t.http.get('/user/me', { token: callers.expired });
    expect(expired.body.code).toBe('token_expired');
    const inactive = await t.http.get('/user/me', { token: callers.inactiveKey });
    expect(inactive.body.code).toBe('api_key_inactive');
  });
});
