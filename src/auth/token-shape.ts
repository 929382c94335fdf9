import { isUuid, UUID_SHAPE } from '../common/validation/uuid';
import type { TokenClaims, TokenType } from './tokens.service';

/** The bearer token's shape picks the strategy (API.md section 1): a JWT or an API key (a UUID). */
export const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const API_KEY_SHAPE = UUID_SHAPE;

/**
 * Whether a JWT-shaped token's payload is a JSON object, as every token's claims are. The
 * verifier (jsonwebtoken) reads claims off a payload of `null` and throws a TypeError, where
 * it refuses other non-objects cleanly; such a token is simply not valid.
 */
export function hasClaimsObject(token: string): boolean {
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload);
  } catch {
    return false;
  }
}

/** Whether a bearer token has the shape of a session (JWT) or of an API key: one the guard authenticates. */
export function isSessionOrKeyShaped(token: string): boolean {
  return JWT_SHAPE.test(token) || API_KEY_SHAPE.test(token);
}

/** How far in the future a token's `iat` may be (clocks of several API processes drift a little). */
const CLOCK_SKEW_SECONDS = 60;

/**
 * Whether a verified token's claims are those the service issues for `type` (see TokensService.sign):
 * user and token ids that are UUIDs, an integer token version, an issue time not in the future,
 * an expiry, and for an access token its session. A signature proves only who signed: a token
 * signed with the secret but without `exp` would never expire, one without `sid` would outlive
 * its logout, and ids that are not UUIDs must not reach the database.
 */
export function isWellFormed(claims: Partial<TokenClaims>, type: TokenType): claims is TokenClaims {
  const now = Math.floor(Date.now() / 1000);
  return (
    claims.typ === type &&
    typeof claims.sub === 'string' &&
    isUuid(claims.sub) &&
    typeof claims.jti === 'string' &&
    isUuid(claims.jti) &&
    Number.isSafeInteger(claims.ver) &&
    claims.ver! >= 0 &&
    Number.isFinite(claims.iat) &&
    claims.iat! <= now + CLOCK_SKEW_SECONDS &&
    Number.isFinite(claims.exp) &&
    (type === 'refresh' ? claims.sid === undefined : typeof claims.sid === 'string' && isUuid(claims.sid))
  );
}
