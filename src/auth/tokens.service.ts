import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { UnauthorizedError } from '../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../config/config';
import { UsersRepository } from './users.repository';

export const JWT_ISSUER = 'seller-payments';
export const JWT_AUDIENCE = 'seller-payments-api';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  sub: string;
  typ: TokenType;
  ver: number;
  jti: string;
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
 * Access and refresh JWTs (HS256, claims of API.md section 1). Refresh tokens are recorded by
 * their `jti`, so logout revokes one; a password reset bumps the user's token version and
 * with it every earlier token.
 */
@Injectable()
export class TokensService {
  constructor(
    @Inject(JwtService) private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(UsersRepository) private readonly users: UsersRepository,
  ) {}

  async issueSession(user: { id: string; tokenVersion: number }): Promise<SessionTokens> {
    const refreshJti = randomUUID();
    await this.dataSource.query(
      `INSERT INTO refresh_tokens (jti, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
      [refreshJti, user.id, this.config.refreshTokenTtl],
    );
    return {
      access: await this.sign(user, 'access', randomUUID()),
      refresh: await this.sign(user, 'refresh', refreshJti),
      access_token_renew_interval: this.config.accessTokenTtl,
    };
  }

  /** A new access token for a valid, unrevoked refresh token. */
  async refresh(refreshToken: string): Promise<{ access: string; access_token_renew_interval: number }> {
    const claims = await this.verifyRefresh(refreshToken);
    return {
      access: await this.sign({ id: claims.sub, tokenVersion: claims.ver }, 'access', randomUUID()),
      access_token_renew_interval: this.config.accessTokenTtl,
    };
  }

  async revoke(refreshToken: string): Promise<void> {
    const claims = await this.verifyRefresh(refreshToken);
    await this.dataSource.query('UPDATE refresh_tokens SET revoked_at = now() WHERE jti = $1 AND revoked_at IS NULL', [
      claims.jti,
    ]);
  }

  /** Verifies signature, expiry, issuer, audience and type; throws 401 otherwise. */
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
    return claims;
  }

  private async verifyRefresh(token: string): Promise<TokenClaims> {
    const claims = await this.verify(token, 'refresh');
    const rows: Array<{ revoked: boolean }> = await this.dataSource.query(
      `SELECT (revoked_at IS NOT NULL OR expires_at <= now()) AS revoked FROM refresh_tokens WHERE jti = $1 AND user_id = $2`,
      [claims.jti, claims.sub],
    );
    const state = await this.users.credentialState(claims.sub);
    if (rows.length === 0 || rows[0].revoked || !state || state.tokenVersion !== claims.ver) {
      throw new UnauthorizedError('token_revoked', 'The refresh token has been revoked.');
    }
    return claims;
  }

  private sign(user: { id: string; tokenVersion: number }, typ: TokenType, jti: string): Promise<string> {
    return this.jwt.signAsync(
      { typ, ver: user.tokenVersion },
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
