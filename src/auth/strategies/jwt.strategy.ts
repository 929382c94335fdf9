import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createSecretKey } from 'node:crypto';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { UnauthorizedError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { CredentialCache } from '../credential-cache';
import type { UserPrincipal } from '../principal';
import { hasClaimsObject, isWellFormed, JWT_SHAPE } from '../token-shape';
import { JWT_AUDIENCE, JWT_ISSUER, TokenClaims } from '../tokens.service';
import { UsersRepository } from '../users.repository';

const bearerToken = ExtractJwt.fromAuthHeaderAsBearerToken();

/** How many verified access tokens a process remembers; the oldest goes first. */
const VERIFIED_TOKENS = 10_000;

/**
 * Authenticates a user's access JWT: signature, expiry, issuer, audience and type, then the
 * user's state in one lookup: it exists and is active, the token version matches, and the
 * token's session (`sid`) has not been logged out (through the per-process CredentialCache).
 * Tokens of other shapes are left to the next strategy.
 *
 * A token whose signature and claims were verified once is remembered until it expires
 * (`verifiedPrincipal`), so the guard checks only the user's state for it again: the same
 * string verifies the same way every time, and that is a tenth of a busy process's CPU.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  private readonly verified = new Map<string, TokenClaims>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly users: UsersRepository,
    private readonly cache: CredentialCache,
  ) {
    super({
      jwtFromRequest: (request: Parameters<typeof bearerToken>[0]) => {
        const token = bearerToken(request);
        // A JWT whose payload is no claims object is refused here (the guard answers invalid_token).
        return token && JWT_SHAPE.test(token) && hasClaimsObject(token) ? token : null;
      },
      // A key object made once: given a string, jsonwebtoken parses it as a key on every request
      // (a fifth of the CPU of a busy process). jsonwebtoken takes a KeyObject; the typings lag.
      secretOrKey: createSecretKey(Buffer.from(config.jwtSecret)) as unknown as string,
      algorithms: ['HS256'],
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  async validate(request: Parameters<typeof bearerToken>[0], claims: TokenClaims): Promise<UserPrincipal> {
    // A refresh token keeps its own answer (principalOf); any other token must be one the service issues.
    if (claims.typ === 'access' && !isWellFormed(claims, 'access'))
      throw new UnauthorizedError('invalid_token', 'The token is not valid.');
    const principal = await this.principalOf(claims);
    const token = bearerToken(request)!;
    if (this.verified.size >= VERIFIED_TOKENS) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, claims);
    return principal;
  }

  /** The principal of a token verified before and not expired since, or null (then passport verifies it). */
  verifiedPrincipal(token: string): Promise<UserPrincipal> | null {
    const claims = this.verified.get(token);
    if (!claims) return null;
    if (Math.floor(Date.now() / 1000) >= claims.exp) {
      this.verified.delete(token);
      return null;
    }
    return this.principalOf(claims);
  }

  private async principalOf(claims: TokenClaims): Promise<UserPrincipal> {
    if (claims.typ !== 'access') {
      throw new UnauthorizedError(
        'invalid_token',
        claims.typ === 'refresh'
          ? 'A refresh token cannot be used as an access token.'
          : 'The token is not an access token.',
      );
    }
    const sessionId = claims.sid ?? null;
    const user = await this.cache.user(claims.sub, sessionId, () => this.users.credentialState(claims.sub, sessionId));
    if (!user || !user.active || user.sessionRevoked || user.tokenVersion !== claims.ver)
      throw new UnauthorizedError('token_revoked', 'The token has been revoked.');
    return {
      kind: 'user',
      id: user.id,
      isSuperuser: user.isSuperuser,
      accessVersion: user.accessVersion,
      credentialId: `user:${user.id}`,
    };
  }
}
