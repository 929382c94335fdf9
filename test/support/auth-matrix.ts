import { PERMISSIONS } from '../../src/auth/permissions';
import type { HttpResponse } from './http';
import {
  CallerName,
  Callers,
  createApiKey,
  createSeller,
  createUser,
  expiredAccessToken,
  grant,
  TestUser,
} from './identity';
import type { TestApp } from './test-app';

/**
 * The auth matrix: every kind of caller against a route, each with the status it must get.
 * Callers act on seller A; "noAccess" has every permission, but on seller B only.
 */
export interface MatrixWorld {
  superuser: TestUser;
  sellerA: string;
  sellerB: string;
  callers: Callers;
  permittedUser: TestUser;
}

export async function matrixWorld(
  t: TestApp,
  options: { superuser?: TestUser; sellerA?: string } = {},
): Promise<MatrixWorld> {
  const superuser = options.superuser ?? (await createUser(t, { superuser: true }));
  const sellerA = options.sellerA ?? (await createSeller(t, superuser, 'Seller A'));
  const sellerB = await createSeller(t, superuser, 'Seller B');
  const noAccess = await createUser(t);
  await grant(t, superuser, sellerB, noAccess, [...PERMISSIONS]);
  const noPermission = await createUser(t);
  await grant(t, superuser, sellerA, noPermission, ['events.manage']);
  const permittedUser = await createUser(t);
  await grant(t, superuser, sellerA, permittedUser, [...PERMISSIONS]);
  const deleted = await createApiKey(t, superuser.access, sellerA);
  await t.http.delete(`/integrations/apikeys/${sellerA}/apikeys/${deleted.id}`, { token: superuser.access });
  return {
    superuser,
    sellerA,
    sellerB,
    permittedUser,
    callers: {
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
    },
  };
}

export interface RouteCase {
  method: string;
  /** Builds the request for one call: routes that consume what they act on get a fresh target. */
  request: () => Promise<{ path: string; body?: unknown }> | { path: string; body?: unknown };
  expect: Record<CallerName, number>;
}

export const CALLERS: CallerName[] = [
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

/** Statuses every authenticated route gives to callers without a valid credential. */
export const UNAUTHENTICATED = {
  none: 401,
  malformed: 401,
  expired: 401,
  refreshAsAccess: 401,
  inactiveKey: 401,
  deletedKey: 401,
} as const;

/** Calls the route as every kind of caller; answers the statuses got and wanted, for one comparison. */
export async function runMatrix(t: TestApp, callers: Callers, route: RouteCase) {
  const got: Record<string, number> = {};
  const want: Record<string, number> = {};
  for (const caller of CALLERS) {
    const { path, body } = await route.request();
    const res: HttpResponse = await t.http.request(route.method, path, { body, token: callers[caller] });
    got[caller] = res.status;
    want[caller] = route.expect[caller];
    if (res.status >= 400 && res.status !== 405) {
      if (res.body?.statusCode !== res.status || typeof res.body?.code !== 'string') {
        throw new Error(`${route.method} ${path} as ${caller}: ${res.status} without the error body: ${res.text}`);
      }
    }
    if (res.status === 401 && res.headers.get('www-authenticate') !== 'Bearer') {
      throw new Error(`${route.method} ${path} as ${caller}: 401 without WWW-Authenticate: Bearer`);
    }
  }
  return { got, want };
}

/**
 * Statuses of a seller route behind a permission: 404 to a user without access to the seller
 * (its existence is not disclosed), 403 without the permission; API keys as `keys` says
 * (refused by default).
 */
export function sellerRoute(
  ok: number,
  keys: Pick<Record<CallerName, number>, 'apiKey' | 'otherSellerKey'> = { apiKey: 403, otherSellerKey: 403 },
): Record<CallerName, number> {
  return { ...UNAUTHENTICATED, noAccess: 404, noPermission: 403, permitted: ok, superuser: ok, ...keys };
}

/** One test per route: every kind of caller gets the status the route case expects. */
export function itAnswersEveryCaller(
  routes: Record<string, RouteCase>,
  world: () => { t: TestApp; callers: Callers },
): void {
  for (const [name, route] of Object.entries(routes)) {
    it(`${name}: every kind of caller gets its status`, async () => {
      const { t, callers } = world();
      const { got, want } = await runMatrix(t, callers, route);
      expect(got).toEqual(want);
    });
  }
}
