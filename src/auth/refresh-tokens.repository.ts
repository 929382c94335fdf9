import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/**
 * SQL of `refresh_tokens`: one row per session, keyed by the refresh token's `jti`, which the
 * session's access tokens carry as `sid`.
 */
@Injectable()
export class RefreshTokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async record(jti: string, userId: string, ttlSeconds: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO refresh_tokens (jti, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
      [jti, userId, ttlSeconds],
    );
  }

  /** Whether the user's refresh token is recorded, unexpired and not revoked. */
  async isUsable(jti: string, userId: string): Promise<boolean> {
    const rows: Array<{ usable: boolean }> = await this.dataSource.query(
      `SELECT (revoked_at IS NULL AND expires_at > now()) AS usable FROM refresh_tokens WHERE jti = $1 AND user_id = $2`,
      [jti, userId],
    );
    return rows[0]?.usable === true;
  }

  /** Ends one session (logout): its refresh token and, through `sid`, its access tokens. */
  async revoke(jti: string): Promise<void> {
    await this.dataSource.query('UPDATE refresh_tokens SET revoked_at = now() WHERE jti = $1 AND revoked_at IS NULL', [
      jti,
    ]);
  }

  /** Ends every session of the user (new password, deactivation). */
  async revokeAllForUser(manager: EntityManager, userId: string): Promise<void> {
    await manager.query('UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [
      userId,
    ]);
  }
}
