import jwt from 'jsonwebtoken';
import { createSecretKey } from 'node:crypto';
import { Client, Pool } from 'pg';

const CACHE_MS = Number(process.env.CREDENTIAL_CACHE_SECONDS ?? 10) * 1000;

/**
 * The authentication of the bare yardsticks, doing what the service's guard does with no
 * framework in between: verify the access JWT (remembered until it expires, as JwtStrategy
 * does), then the user's state (active, token version,
 * session not logged out) and permissions on the seller, cached per process for the same time
 * as the service's CredentialCache and emptied by the same `credentials_changed`
 * notifications. Answers the HTTP status to refuse with, or null when the call may proceed.
 */
export function bareAuthentication(pool: Pool) {
  const secret = createSecretKey(Buffer.from(process.env.JWT_SECRET!));
  const cache = new Map<string, { expiresAt: number; state: { ok: boolean; permissions: string[] | null } }>();
  const verified = new Map<string, jwt.JwtPayload>();
  onCredentialsChanged(() => cache.clear());

  return async function authenticate(
    authorization: string | undefined,
    sellerId: string,
    permission: string,
  ): Promise<401 | 403 | 404 | null> {
    const token = (authorization ?? '').replace(/^Bearer /, '');
    let claims = verified.get(token);
    if (!claims || Math.floor(Date.now() / 1000) >= claims.exp!) {
      try {
        claims = jwt.verify(token, secret, {
          algorithms: ['HS256'],
          issuer: 'seller-payments',
          audience: 'seller-payments-api',
        }) as jwt.JwtPayload;
      } catch {
        return 401;
      }
      if (verified.size >= 10_000) verified.delete(verified.keys().next().value!);
      verified.set(token, claims);
    }
    if (claims.typ !== 'access') return 401;
    const key = `${claims.sub}:${claims.sid}:${claims.ver}:${sellerId}`;
    let state = cache.get(key);
    if (!state || state.expiresAt < Date.now()) {
      // The user (as UsersRepository.credentialState reads it) with their access to the seller
      // (as AccessesRepository.accessOf does), in one round trip.
      const { rows } = await pool.query(
        `SELECT u.active AND u.token_version = $3 AND NOT EXISTS (
                  SELECT 1 FROM refresh_tokens r WHERE r.jti = $4 AND r.revoked_at IS NOT NULL) AS ok,
                s.id IS NOT NULL AS seller_exists, a.permissions
           FROM users u LEFT JOIN sellers s ON s.id = $2 LEFT JOIN accesses a ON a.user_id = u.id AND a.seller_id = s.id
          WHERE u.id = $1`,
        [claims.sub, sellerId, claims.ver, claims.sid ?? null],
      );
      const row = rows[0] as { ok: boolean; permissions: string[] | null } | undefined;
      state = {
        expiresAt: Date.now() + CACHE_MS,
        state: { ok: row?.ok ?? false, permissions: row?.permissions ?? null },
      };
      if (CACHE_MS > 0) cache.set(key, state);
    }
    if (!state.state.ok) return 401;
    if (!state.state.permissions) return 404;
    return state.state.permissions.includes(permission) ? null : 403;
  };
}

/**
 * What the bare yardsticks cache for `CREDENTIAL_CACHE_SECONDS`, as the service's
 * CredentialCache does, emptied by every `credentials_changed` notification: the value `load`
 * answers for a key.
 */
export function bareCache<T>(load: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const entries = new Map<string, { expiresAt: number; value: T }>();
  onCredentialsChanged(() => entries.clear());
  return async (key) => {
    const hit = entries.get(key);
    if (hit && hit.expiresAt >= Date.now()) return hit.value;
    const value = await load(key);
    if (CACHE_MS > 0) entries.set(key, { expiresAt: Date.now() + CACHE_MS, value });
    return value;
  };
}

function onCredentialsChanged(changed: () => void): void {
  const listener = new Client({ connectionString: process.env.DATABASE_URL });
  void listener
    .connect()
    .then(() => listener.query('LISTEN credentials_changed'))
    .then(() => listener.on('notification', changed));
}
