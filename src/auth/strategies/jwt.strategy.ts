import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createSecretKey } from 'node:crypto';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { UnauthorizedError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/config';
import type { AuthenticatedRequest, UserPrincipal } from '../principal';
import { JWT_AUDIENCE, JWT_ISSUER, TokenClaims } from '../tokens.service';
import { UsersRepository } from '../users.repository';

/** A user's access JWT: signature, expiry, issuer, audience, type, and the user's token version. */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(UsersRepository) private readonly users: UsersRepository,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
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

  async validate(request: AuthenticatedRequest, claims: TokenClaims): Promise<UserPrincipal> {
    if (claims.typ !== 'access')
      throw new UnauthorizedError('invalid_token', 'A refresh token cannot be used as an access token.');
    const user = await this.users.credentialState(claims.sub, request.routeSellerId);
    if (!user || user.tokenVersion !== claims.ver)
      throw new UnauthorizedError('token_revoked', 'The token has been revoked.');
    return {
      kind: 'user',
      id: user.id,
      isSuperuser: user.isSuperuser,
      credentialId: `user:${user.id}`,
      ...(user.seller
        ? {
            sellerAccess: {
              sellerId: user.seller.id,
              exists: user.seller.exists,
              permissions: user.seller.permissions,
            },
          }
        : {}),
    };
  }
}
