import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditAction, recordAudit, userFlagAudit } from '../audit/audit-log';
import { ForbiddenError, NotFoundError } from '../common/errors/api-error';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { AdminUpdateUserDto, AdminUserResponseDto } from './dto/admin-user.dto';
import { CredentialCache } from './credential-cache';
import { PasswordRecoveriesRepository } from './password-recoveries.repository';
import type { UserPrincipal } from './principal';
import { RefreshTokensRepository } from './refresh-tokens.repository';
import { UsersRepository } from './users.repository';

/**
 * The users admin (superusers, API.md section 3): list, read, activate or deactivate, grant or
 * revoke superuser. A deactivated user's sessions end at once (its refresh tokens are revoked,
 * and the guard refuses its access tokens) and a password recovery code sent to it is burnt, so
 * that reactivating the account does not revive it. Each change writes one audit row in its
 * transaction.
 */
@Injectable()
export class UsersAdminService {
  constructor(
    private readonly users: UsersRepository,
    private readonly refreshTokens: RefreshTokensRepository,
    private readonly recoveries: PasswordRecoveriesRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly credentials: CredentialCache,
  ) {}

  async list(page: PageRequest, search?: string): Promise<Page<AdminUserResponseDto>> {
    return toPage(await this.users.list(page, search), page, (u) => u.seq, AdminUserResponseDto.of);
  }

  async get(id: string): Promise<AdminUserResponseDto> {
    const user = await this.users.findById(id);
    if (!user) throw userNotFound();
    return AdminUserResponseDto.of(user);
  }

  async update(principal: UserPrincipal, id: string, changes: AdminUpdateUserDto): Promise<AdminUserResponseDto> {
    if (id === principal.id && (changes.active === false || changes.is_superuser === false)) {
      throw new ForbiddenError(
        'own_account_not_changeable',
        'You cannot deactivate yourself or drop your own superuser status; ask another superuser.',
      );
    }
    const user = await this.dataSource.transaction(async (manager) => {
      const before = await this.users.lockById(manager, id);
      if (!before) throw userNotFound();
      const audits: AuditAction[] = [];
      if (changes.active !== undefined && changes.active !== before.active) {
        audits.push(changes.active ? 'user.activated' : 'user.deactivated');
        if (!changes.active) {
          await this.refreshTokens.revokeAllForUser(manager, id);
          await this.recoveries.burn(manager, id);
        }
      }
      if (changes.is_superuser !== undefined && changes.is_superuser !== before.isSuperuser) {
        audits.push(changes.is_superuser ? 'user.superuser_granted' : 'user.superuser_revoked');
      }
      if (audits.length === 0) return before;
      await this.users.update(id, { active: changes.active, isSuperuser: changes.is_superuser }, manager);
      for (const action of audits) {
        const field = action === 'user.activated' || action === 'user.deactivated' ? 'active' : 'is_superuser';
        await recordAudit(
          manager,
          userFlagAudit(action, id, field, field === 'active' ? before.active : before.isSuperuser),
        );
      }
      return (await this.users.findById(id, manager))!;
    });
    this.credentials.userChanged(id);
    return AdminUserResponseDto.of(user);
  }
}

function userNotFound(): NotFoundError {
  return new NotFoundError('User not found.', 'user_not_found');
}
