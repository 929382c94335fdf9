import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Permission } from '../../src/auth/permissions';
import { TEST_JWT_SECRET, TestApp } from './test-app';

/** Users, sellers, accesses and keys made over HTTP, as a client of the API would. */
export interface TestUser {
  id: string;
  email: string;
  password: string;
  access: string;
  refresh: string;
}

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export async function createUser(t: TestApp, options: { superuser?: boolean } = {}): Promise<TestUser> {
  const email = `user-${unique()}@example.com`;
  const password = 'correct horse battery staple';
  const registered = await t.http.post('/user/register', { email, password, name: 'Test User' });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${registered.text}`);
  if (options.superuser) {
    await t.db.query('UPDATE users SET is_superuser = true WHERE id = $1', [registered.body.id]);
  }
  const session = await login(t, email, password);
  return { id: registered.body.id, email, password, ...session };
}

export async function login(t: TestApp, email: string, password: string): Promise<{ access: string; refresh: string }> {
  const res = await t.http.post('/user/login', { email, password });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
  return { access: res.body.access, refresh: res.body.refresh };
}

/** A valid CNPJ: 12 random digits and their two check digits. */
export function validCnpj(): string {
  const d = Array.from({ length: 12 }, () => Math.floor(Math.random() * 10));
  d[0] = 1 + (d[0] % 9);
  const check = (weights: number[]) => {
    const rest = weights.reduce((acc, w, i) => acc + w * d[i], 0) % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  d.push(check([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]));
  d.push(check([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]));
  return d.join('');
}

export async function createSeller(t: TestApp, superuser: TestUser, name = 'Loja Teste'): Promise<string> {
  const res = await t.http.post(
    '/sellers',
    { name, document: validCnpj(), email: `seller-${unique()}@example.com` },
    { token: superuser.access },
  );
  if (res.status !== 201) throw new Error(`create seller: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function grant(
  t: TestApp,
  superuser: TestUser,
  sellerId: string,
  user: TestUser,
  permissions: Permission[],
): Promise<string> {
  const res = await t.http.post(
    `/sellers/${sellerId}/accesses`,
    { user: user.id, permissions },
    { token: superuser.access },
  );
  if (res.status !== 201) throw new Error(`grant: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function createApiKey(
  t: TestApp,
  token: string,
  sellerId: string,
  active = true,
): Promise<{ id: string; key: string }> {
  const res = await t.http.post(
    `/integrations/apikeys/${sellerId}/apikeys`,
    { label: 'test key', description: '', active },
    { token },
  );
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return { id: res.body.id, key: res.body.key };
}

/** A correctly signed access token that expired a minute ago. */
export async function expiredAccessToken(user: TestUser): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ typ: 'access', ver: 0 })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.id)
    .setJti(randomUUID())
    .setIssuer('seller-payments')
    .setAudience('seller-payments-api')
    .setIssuedAt(now - 86_460)
    .setExpirationTime(now - 60)
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

/**
 * Every kind of caller the auth matrix of a route is checked with. `forSeller` is the seller
 * the route acts on: keys and accesses are set up on it (or on another seller).
 */
export interface Callers {
  none: undefined;
  malformed: string;
  expired: string;
  refreshAsAccess: string;
  noAccess: string;
  noPermission: string;
  permitted: string;
  superuser: string;
  apiKey: string;
  inactiveKey: string;
  deletedKey: string;
  otherSellerKey: string;
}

export type CallerName = keyof Callers;
