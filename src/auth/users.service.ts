import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { hash, verify } from '@node-rs/argon2';
import { DataSource } from 'typeorm';
import { recordAudit, userFlagAudit } from '../audit/audit-log';
import { ConflictError, NotFoundError, UnauthorizedError } from '../common/errors/api-error';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { SellersService } from '../sellers/sellers.service';
import { MeResponseDto, RegisterDto, UserResponseDto } from './dto/user.dto';
import type { User } from './entities/user.entity';
import { CredentialCache } from './credential-cache';
import { RefreshTokensRepository } from './refresh-tokens.repository';
import { SessionTokens, TokensService } from './tokens.service';
import { normaliseEmail, UsersRepository } from './users.repository';
import { isUniqueViolation } from '../common/errors/database-errors';

/** Argon2id with the library's defaults (m=19 MiB, t=2, p=1: OWASP's minimum). */
export const hashPassword = (password: string) => hash(password);

/** Registration, login and the caller's profile. */
@Injectable()
export class UsersService {
  /** Verified when the e-mail is unknown, so that both failures take the same time. */
  private readonly decoyHash = hash('decoy password that never matches');

  constructor(
    private readonly users: UsersRepository,
    private readonly tokens: TokensService,
    private readonly refreshTokens: RefreshTokensRepository,
    private readonly sellers: SellersService,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly credentials: CredentialCache,
  ) {}

  async register(input: RegisterDto): Promise<UserResponseDto> {
    if (await this.users.findByEmail(input.email)) throw emailTaken();
    try {
      const passwordHash = await hashPassword(input.password);
      return await requestTransaction(this.dataSource, async (manager) =>
        toUserResponse(await this.users.create({ email: input.email, name: input.name.trim(), passwordHash }, manager)),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw emailTaken();
      throw error;
    }
  }

  async login(email: string, password: string): Promise<SessionTokens> {
    const user = await this.users.findByEmail(email);
    const valid = await verify(user?.passwordHash ?? (await this.decoyHash), password).catch(() => false);
    // A deactivated user gets the same answer as a wrong password.
    if (!user || !valid || !user.active) {
      throw new UnauthorizedError('invalid_credentials', 'Invalid e-mail or password.');
    }
    return this.tokens.issueSession(user);
  }

  async me(userId: string): Promise<MeResponseDto> {
    const user = await this.users.findById(userId);
    if (!user) throw new NotFoundError('User not found.');
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      is_superuser: user.isSuperuser,
      accesses: await this.sellers.accessesOfUser(user.id),
    };
  }

  /**
   * CLI: creates a superuser, or promotes the existing user of that e-mail: sets the password,
   * reactivates a deactivated account (a superuser who cannot log in would be no use), and ends
   * its earlier sessions. Audited as the system's act (`user.superuser_granted`, `user.activated`).
   */
  async createOrPromoteSuperuser(
    email: string,
    password: string,
    name?: string,
  ): Promise<{ user: User; created: boolean; reactivated: boolean }> {
    const passwordHash = await hashPassword(password);
    const trimmed = name?.trim();
    const result = await this.dataSource.transaction(async (manager) => {
      // Read under the row lock, so the audit says what this changed even if an admin acts at once.
      const found = await this.users.findByEmail(email, manager);
      const existing = found && (await this.users.lockById(manager, found.id));
      if (!existing) {
        const user = await this.users.create(
          { email, name: trimmed ?? normaliseEmail(email).split('@')[0], passwordHash, isSuperuser: true },
          manager,
        );
        await recordAudit(manager, userFlagAudit('user.superuser_granted', user.id, 'is_superuser', false));
        return { user, created: true, reactivated: false };
      }
      // A new password ends every earlier session, as a password reset does.
      await this.users.resetPassword(manager, existing.id, passwordHash);
      await this.users.update(
        existing.id,
        { isSuperuser: true, active: true, ...(trimmed ? { name: trimmed } : {}) },
        manager,
      );
      await this.refreshTokens.revokeAllForUser(manager, existing.id);
      if (!existing.isSuperuser) {
        await recordAudit(manager, userFlagAudit('user.superuser_granted', existing.id, 'is_superuser', false));
      }
      if (!existing.active) await recordAudit(manager, userFlagAudit('user.activated', existing.id, 'active', false));
      const user = (await this.users.findById(existing.id, manager))!;
      return { user, created: false, reactivated: !existing.active };
    });
    if (!result.created) this.credentials.userChanged(result.user.id);
    return result;
  }
}

function emailTaken(): ConflictError {
  return new ConflictError('email_taken', 'A user with this e-mail already exists.');
}

function toUserResponse(user: User): UserResponseDto {
  return { id: user.id, email: user.email, name: user.name, created_at: user.createdAt.toISOString() };
}
