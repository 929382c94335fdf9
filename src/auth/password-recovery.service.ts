import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { BadRequestError } from '../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../config/config';
import { MailService } from '../mail/mail.service';
import { CredentialCache } from './credential-cache';
import { PasswordRecoveriesRepository } from './password-recoveries.repository';
import { RefreshTokensRepository } from './refresh-tokens.repository';
import { hashPassword } from './users.service';
import { UsersRepository } from './users.repository';

export const RECOVERY_CODE_TTL_MINUTES = 15;
export const RECOVERY_MAX_ATTEMPTS = 5;

/**
 * Password recovery in two steps (spec 4.7, API.md section 2). A 6-digit code from a CSPRNG
 * is e-mailed and stored only as an HMAC; it is valid 15 minutes, used once, burned after 5
 * wrong tries and replaced by a newer request. Setting the new password revokes every
 * earlier token of the user.
 */
@Injectable()
export class PasswordRecoveryService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly recoveries: PasswordRecoveriesRepository,
    private readonly refreshTokens: RefreshTokensRepository,
    private readonly mail: MailService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly credentials: CredentialCache,
  ) {}

  /**
   * Sends a code when the e-mail belongs to an active user; answers the same either way. A
   * deactivated user could not sign in with a new password, so it gets no code.
   */
  async request(email: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const user = await this.users.findByEmail(email, manager);
      if (!user?.active) return;
      const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
      await this.recoveries.replace(manager, user.id, this.codeHash(user.id, code), RECOVERY_CODE_TTL_MINUTES);
      await this.mail.queue(manager, {
        to: user.email,
        subject: 'Your password recovery code',
        text:
          `Hello ${user.name},\n\nYour password recovery code is ${code}.\n` +
          `It is valid for ${RECOVERY_CODE_TTL_MINUTES} minutes and can be used once.\n\n` +
          'If you did not ask to recover your password, ignore this message.\n',
      });
    });
  }

  async confirm(email: string, code: string, newPassword: string): Promise<void> {
    const passwordHash = await hashPassword(newPassword);
    const outcome = await this.dataSource.transaction(async (manager) => {
      const user = await this.users.findByEmail(email, manager);
      // Deactivated since the code was sent: its password does not change (it could not sign in with it).
      if (!user?.active) return 'invalid' as const;
      const recovery = await this.recoveries.lockForUser(manager, user.id);
      if (!recovery) return 'invalid' as const;
      if (recovery.expired) {
        await this.recoveries.burn(manager, user.id);
        return 'invalid' as const;
      }
      if (!this.matches(recovery.codeHash, this.codeHash(user.id, code))) {
        if (recovery.attempts + 1 >= RECOVERY_MAX_ATTEMPTS) await this.recoveries.burn(manager, user.id);
        else await this.recoveries.countFailedAttempt(manager, user.id);
        return 'invalid' as const;
      }
      await this.recoveries.burn(manager, user.id);
      await this.users.resetPassword(manager, user.id, passwordHash);
      await this.refreshTokens.revokeAllForUser(manager, user.id);
      return { userId: user.id };
    });
    if (outcome === 'invalid') {
      throw new BadRequestError('invalid_recovery_token', 'The recovery code is invalid or has expired.');
    }
    this.credentials.userChanged(outcome.userId);
  }

  private codeHash(userId: string, code: string): string {
    return createHmac('sha256', this.config.jwtSecret).update(`password-recovery:${userId}:${code}`).digest('hex');
  }

  private matches(stored: string, candidate: string): boolean {
    const a = Buffer.from(stored, 'hex');
    const b = Buffer.from(candidate, 'hex');
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
