import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { recordAudit } from '../audit/audit-log';
import { changedFields } from '../audit/changes';
import { AuthorizationService } from '../auth/authorization.service';
import { CredentialCache } from '../auth/credential-cache';
import type { Permission } from '../auth/permissions';
import type { UserPrincipal } from '../auth/principal';
import { UserDirectory } from '../auth/user-directory.service';
import { ConflictError, NotFoundError, ValidationError } from '../common/errors/api-error';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { AccessesRepository } from './accesses.repository';
import { AccessResponseDto, CreateAccessDto } from './dto/access.dto';
import { isUniqueViolation } from '../common/errors/database-errors';

/**
 * The access table of a seller: who may do what there. Who may write it is decided by
 * AuthorizationService (no granting what one does not hold, no editing one's own entry);
 * every write is audited in its transaction.
 */
@Injectable()
export class AccessesService {
  constructor(
    private readonly accesses: AccessesRepository,
    private readonly users: UserDirectory,
    private readonly authorization: AuthorizationService,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly credentials: CredentialCache,
  ) {}

  async grant(principal: UserPrincipal, sellerId: string, input: CreateAccessDto): Promise<AccessResponseDto> {
    // Exactly one of user (an id) and email names the user.
    if (input.user === undefined && input.email === undefined) {
      throw ValidationError.of('user', 'is required when email is not given');
    }
    if (input.user !== undefined && input.email !== undefined) {
      throw ValidationError.of('user', 'cannot be given with email: name the user one way');
    }
    const user = await this.users.find(input.user ? { id: input.user } : { email: input.email! });
    if (!user) throw ValidationError.of(input.user ? 'user' : 'email', 'must name an existing user');
    await this.authorization.authorizeAccessChange(
      principal,
      sellerId,
      { userId: user.id, permissions: [] },
      input.permissions,
    );
    try {
      const access = await requestTransaction(this.dataSource, async (manager) => {
        const created = await this.accesses.create(manager, {
          sellerId,
          userId: user.id,
          permissions: input.permissions,
        });
        await recordAudit(manager, {
          action: 'access.granted',
          sellerId,
          target: { type: 'access', id: created.id },
          changes: { user: user.id, permissions: created.permissions },
        });
        return AccessResponseDto.of(created);
      });
      this.credentials.userChanged(user.id);
      return access;
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError('access_exists', 'This user already has an access to the seller; update it instead.');
      }
      throw error;
    }
  }

  async list(sellerId: string, page: PageRequest): Promise<Page<AccessResponseDto>> {
    return toPage(await this.accesses.listForSeller(sellerId, page), page, (a) => a.seq, AccessResponseDto.of);
  }

  async update(
    principal: UserPrincipal,
    sellerId: string,
    id: string,
    permissions: Permission[],
  ): Promise<AccessResponseDto> {
    const access = await this.dataSource.transaction(async (manager) => {
      const current = await this.accesses.lockForSeller(manager, sellerId, id);
      if (!current) throw accessNotFound();
      await this.authorization.authorizeAccessChange(principal, sellerId, current, permissions);
      // The same permissions again write nothing (nor move updated_at).
      if (Object.keys(changedFields({ permissions: current.permissions }, { permissions })).length > 0) {
        await this.accesses.updatePermissions(manager, sellerId, id, permissions);
        await recordAudit(manager, {
          action: 'access.changed',
          sellerId,
          target: { type: 'access', id },
          changes: { user: current.userId, permissions: { from: current.permissions, to: permissions } },
        });
      }
      return (await this.accesses.findForSeller(sellerId, id, manager))!;
    });
    this.credentials.userChanged(access.userId);
    return AccessResponseDto.of(access);
  }

  async revoke(principal: UserPrincipal, sellerId: string, id: string): Promise<void> {
    const userId = await this.dataSource.transaction(async (manager) => {
      const current = await this.accesses.lockForSeller(manager, sellerId, id);
      if (!current) throw accessNotFound();
      await this.authorization.authorizeAccessChange(principal, sellerId, current, []);
      await this.accesses.delete(manager, sellerId, id);
      await recordAudit(manager, {
        action: 'access.revoked',
        sellerId,
        target: { type: 'access', id },
        changes: { user: current.userId, permissions: current.permissions },
      });
      return current.userId;
    });
    this.credentials.userChanged(userId);
  }
}

function accessNotFound(): NotFoundError {
  return new NotFoundError('Access not found.', 'access_not_found');
}
