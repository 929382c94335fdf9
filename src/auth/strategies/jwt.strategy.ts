import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createSecretKey } from 'node:crypto';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { UnauthorizedError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/config';
import { CredentialCache } from '../credential-cache';
import type { UserPrincipal } from '../principal';
import { JWT_SHAPE } from '../token-shape';
import { JWT_AUDIENCE, JWT_ISSUER, TokenClaims } from '../tokens.service';
import { UsersRepository } from '../users.repository';

const bearerToken = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * Authenticates a user's access JWT: signature, expiry, issuer, audience and type, then the
 * user's state in one lookup: it exists and is active, the token version matches, and the
 * token's session (`sid`) has not been logged out (through the per-process CredentialCache). Tokens of other shapes are left to the
 * next strategy.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(UsersRepository) private readonly users: UsersRepository,
    @Inject(CredentialCache) private readonly cache: CredentialCache,
  ) {
    super({
      jwtFromRequest: (request: Parameters<typeof bearerToken>[0]) => {
        const token = bearerToken(request);
        return token && JWT_SHAPE.test(token) ? token : null;
      },
      // A key object made once: given a string, jsonwebtoken parses it as a key on every request
      // (a fifth of the CPU of a busy process). jsonwebtoken takes a KeyObject; the typings lag.
      secretOrKey: createSecretKey(Buffer.from(config.jwtSecret)) as unknown as string,
      algorithms: ['HS256'],
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      ignoreExpiration: false,
    });
  }

  async validate(claims: TokenClaims): Promise<UserPrincipal> {
    if (claims.typ !== 'access')
      throw new UnauthorizedError('invalid_token', 'A refresh token cannot be used as an access token.');
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
