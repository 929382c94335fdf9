import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

export interface PasswordRecoveryRow {
  codeHash: string;
  attempts: number;
  expired: boolean;
}

/** SQL of `password_recoveries`: at most one pending code per user, stored as an HMAC. */
@Injectable()
export class PasswordRecoveriesRepository {
  /** Stores a new code for the user, replacing any earlier one (its tries start again). */
  async replace(manager: EntityManager, userId: string, codeHash: string, ttlMinutes: number): Promise<void> {
    await manager.query(
      `INSERT INTO password_recoveries (user_id, code_hash, attempts, expires_at)
       VALUES ($1, $2, 0, now() + make_interval(mins => $3))
       ON CONFLICT (user_id) DO UPDATE
         SET code_hash = EXCLUDED.code_hash, attempts = 0, expires_at = EXCLUDED.expires_at, created_at = now()`,
      [userId, codeHash, ttlMinutes],
    );
  }

  /** The user's pending code, locked until the end of the caller's transaction. */
  async lockForUser(manager: EntityManager, userId: string): Promise<PasswordRecoveryRow | null> {
    const rows: Array<{ code_hash: string; attempts: number; expired: boolean }> = await manager.query(
      `SELECT code_hash, attempts, expires_at <= now() AS expired FROM password_recoveries WHERE user_id = $1 FOR UPDATE`,
      [userId],
    );
    return rows[0] ? { codeHash: rows[0].code_hash, attempts: rows[0].attempts, expired: rows[0].expired } : null;
  }

  async countFailedAttempt(manager: EntityManager, userId: string): Promise<void> {
    await manager.query('UPDATE password_recoveries SET attempts = attempts + 1 WHERE user_id = $1', [userId]);
  }

  /** Removes the user's code (used, expired or burned). */
  async burn(manager: EntityManager, userId: string): Promise<void> {
    await manager.query('DELETE FROM password_recoveries WHERE user_id = $1', [userId]);
  }
}
