import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { randomUUID } from 'node:crypto';
import { UnauthorizedError } from '../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../config/config';
import { CredentialCache } from './credential-cache';
import { RefreshTokensRepository } from './refresh-tokens.repository';
import { isWellFormed } from './token-shape';
import { UsersRepository } from './users.repository';

export const JWT_ISSUER = 'seller-payments';
export const JWT_AUDIENCE = 'seller-payments-api';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  sub: string;
  typ: TokenType;
  ver: number;
  jti: string;
  /** Access tokens: the session, i.e. the `jti` of the refresh token it was issued with. */
  sid?: string;
  iat: number;
  exp: number;
  iss: string;
  aud: string;
}

export interface SessionTokens {
  access: string;
  refresh: string;
  access_token_renew_interval: number;
}

/**
 * Access and refresh JWTs (HS256, claims of API.md section 1). A session is its refresh token,
 * recorded by its `jti`; the session's access tokens carry that id as `sid`, so a logout ends
 * the refresh token and its access tokens at once. A password reset bumps the user's token
 * version and with it every earlier token.
 */
@Injectable()
export class TokensService {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly refreshTokens: RefreshTokensRepository,
    private readonly users: UsersRepository,
    private readonly credentials: CredentialCache,
  ) {}

  async issueSession(user: { id: string; tokenVersion: number }): Promise<SessionTokens> {
    const refreshJti = randomUUID();
    await this.refreshTokens.record(refreshJti, user.id, this.config.refreshTokenTtl);
    return {
      access: await this.sign(user, 'access', randomUUID(), refreshJti),
      refresh: await this.sign(user, 'refresh', refreshJti),
      access_token_renew_interval: this.config.accessTokenTtl,
    };
  }

  /** A new access token for a valid, unrevoked refresh token. */
  async refresh(refreshToken: string): Promise<{ access: string; access_token_renew_interval: number }> {
    const claims = await this.verifyRefresh(refreshToken);
    return {
      access: await this.sign({ id: claims.sub, tokenVersion: claims.ver }, 'access', randomUUID(), claims.jti),
      access_token_renew_interval: this.config.accessTokenTtl,
    };
  }

  /** Logout: the refresh token and the access tokens of its session stop working. */
  async revoke(refreshToken: string): Promise<void> {
    const claims = await this.verifyRefresh(refreshToken);
    await this.refreshTokens.revoke(claims.jti);
    this.credentials.userChanged(claims.sub);
  }

  /** Verifies signature, expiry, issuer, audience, type and the claims' shape (isWellFormed); throws 401 otherwise. */
  async verify(token: string, type: TokenType): Promise<TokenClaims> {
    let claims: TokenClaims;
    try {
      claims = await this.jwt.verifyAsync<TokenClaims>(token, {
        algorithms: ['HS256'],
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
      });
    } catch (error) {
      if ((error as Error).name === 'TokenExpiredError')
        throw new UnauthorizedError('token_expired', 'The token has expired.');
      throw new UnauthorizedError('invalid_token', 'The token is not valid.');
    }
    if (claims.typ !== type) {
      throw new UnauthorizedError(
        'invalid_token',
        `An ${claims.typ === 'access' ? 'access' : 'refresh'} token cannot be used here.`,
      );
    }
    if (!isWellFormed(claims, type)) throw new UnauthorizedError('invalid_token', 'The token is not valid.');
    return claims;
  }

  private async verifyRefresh(token: string): Promise<TokenClaims> {
    const claims = await this.verify(token, 'refresh');
    const usable = await this.refreshTokens.isUsable(claims.jti, claims.sub);
    const state = await this.users.credentialState(claims.sub, null);
    if (!usable || !state || !state.active || state.tokenVersion !== claims.ver) {
      throw new UnauthorizedError('token_revoked', 'The refresh token has been revoked.');
    }
    return claims;
  }

  private sign(
    user: { id: string; tokenVersion: number },
    typ: TokenType,
    jti: string,
    sessionId?: string,
  ): Promise<string> {
    return this.jwt.signAsync(
      { typ, ver: user.tokenVersion, ...(sessionId ? { sid: sessionId } : {}) },
      {
        subject: user.id,
        jwtid: jti,
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        algorithm: 'HS256',
        expiresIn: typ === 'access' ? this.config.accessTokenTtl : this.config.refreshTokenTtl,
      },
    );
  }
}
