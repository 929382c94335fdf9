import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A subscriber's manage token: `smt_` and 43 base64url characters (256 random bits). Its shape
 * is neither a JWT nor a UUID, so the access guard never takes it for a session or an API key.
 * Only its SHA-256 is stored.
 */
export const MANAGE_TOKEN_SHAPE = /^smt_[A-Za-z0-9_-]{43}$/;

/** The refusal of a manage token that is not this subscription's (or no manage token at all). */
export const INVALID_MANAGE_TOKEN = {
  code: 'invalid_manage_token',
  message: 'The manage token is not valid for this subscription.',
};

export function newManageToken(): { token: string; hash: string } {
  const token = `smt_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashManageToken(token) };
}

export function hashManageToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether `token` is the one whose hash is stored (constant time). */
export function manageTokenMatches(token: string, storedHash: string): boolean {
  const presented = Buffer.from(hashManageToken(token), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
