import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import { User } from './entities/user.entity';

/** What authentication checks of a user on every request. */
export interface UserCredentialState {
  id: string;
  isSuperuser: boolean;
  active: boolean;
  tokenVersion: number;
  /** Bumped by the database whenever one of the user's access entries is written (a bigint, as a string). */
  accessVersion: string;
  /** Whether the session the token belongs to (its refresh token) was ended by a logout. */
  sessionRevoked: boolean;
}

/** SQL of the users table. */
@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  findById(id: string, manager?: EntityManager): Promise<User | null> {
    return (manager?.getRepository(User) ?? this.users).findOneBy({ id });
  }

  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return (manager?.getRepository(User) ?? this.users).findOneBy({ email: normaliseEmail(email) });
  }

  /** The user, locked until the end of the caller's transaction. */
  lockById(manager: EntityManager, id: string): Promise<User | null> {
    return manager.getRepository(User).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /**
   * What authentication needs of a user on every request, in one indexed lookup: the user's
   * flags and versions, and whether the token's session (`sid`, the id of its refresh token)
   * has been logged out.
   */
  async credentialState(id: string, sessionId: string | null): Promise<UserCredentialState | null> {
    const rows: Array<{
      id: string;
      is_superuser: boolean;
      active: boolean;
      token_version: number;
      access_version: string;
      session_revoked: boolean;
    }> = await this.users.query(
      `SELECT u.id, u.is_superuser, u.active, u.token_version, u.access_version,
              EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.jti = $2 AND r.revoked_at IS NOT NULL) AS session_revoked
         FROM users u WHERE u.id = $1`,
      [id, sessionId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      isSuperuser: row.is_superuser,
      active: row.active,
      tokenVersion: row.token_version,
      accessVersion: row.access_version,
      sessionRevoked: row.session_revoked,
    };
  }

  /** A page of users, optionally those whose e-mail contains `emailContains` (case-insensitive). */
  list(page: PageRequest, emailContains?: string): Promise<User[]> {
    const query = this.users.createQueryBuilder('u');
    if (emailContains) {
      query.where(`u.email LIKE :pattern ESCAPE '\\'`, {
        pattern: `%${normaliseEmail(emailContains).replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
      });
    }
    return applyKeyset(query, 'u.seq', page).getMany();
  }

  create(
    input: { email: string; name: string; passwordHash: string; isSuperuser?: boolean },
    manager?: EntityManager,
  ): Promise<User> {
    const repo = manager?.getRepository(User) ?? this.users;
    return repo.save(
      repo.create({ ...input, email: normaliseEmail(input.email), isSuperuser: input.isSuperuser ?? false }),
    );
  }

  async update(
    id: string,
    changes: Partial<Pick<User, 'name' | 'isSuperuser' | 'active'>>,
    manager?: EntityManager,
  ): Promise<void> {
    await (manager?.getRepository(User) ?? this.users).update({ id }, changes);
  }

  /** Sets a new password and invalidates every token minted before. */
  async resetPassword(manager: EntityManager, id: string, passwordHash: string): Promise<void> {
    await manager.query(
      'UPDATE users SET password_hash = $2, token_version = token_version + 1, updated_at = now() WHERE id = $1',
      [id, passwordHash],
    );
  }
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
