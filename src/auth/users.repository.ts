import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { User } from './entities/user.entity';
import type { Permission } from './permissions';

export interface UserCredentialState {
  id: string;
  isSuperuser: boolean;
  tokenVersion: number;
  /** When asked about a seller: whether it exists and the user's permissions there (null: no access). */
  seller?: { id: string; exists: boolean; permissions: Permission[] | null };
}

@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  findById(id: string): Promise<User | null> {
    return this.users.findOneBy({ id });
  }

  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return (manager?.getRepository(User) ?? this.users).findOneBy({ email: normaliseEmail(email) });
  }

  /**
   * What authentication needs of a user on every request, in one indexed lookup; with a
   * seller id, also the user's access to that seller (saving the guard a second query).
   */
  async credentialState(id: string, sellerId?: string): Promise<UserCredentialState | null> {
    if (!sellerId) {
      const rows: Array<{ id: string; is_superuser: boolean; token_version: number }> = await this.users.query(
        'SELECT id, is_superuser, token_version FROM users WHERE id = $1',
        [id],
      );
      return rows[0]
        ? { id: rows[0].id, isSuperuser: rows[0].is_superuser, tokenVersion: rows[0].token_version }
        : null;
    }
    const rows: Array<{
      id: string;
      is_superuser: boolean;
      token_version: number;
      seller_exists: boolean;
      permissions: Permission[] | null;
    }> = await this.users.query(
      `SELECT u.id, u.is_superuser, u.token_version, s.id IS NOT NULL AS seller_exists, a.permissions
         FROM users u
         LEFT JOIN sellers s ON s.id = $2
         LEFT JOIN accesses a ON a.user_id = u.id AND a.seller_id = s.id
         WHERE u.id = $1`,
      [id, sellerId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      isSuperuser: row.is_superuser,
      tokenVersion: row.token_version,
      seller: { id: sellerId, exists: row.seller_exists, permissions: row.permissions },
    };
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
    changes: Partial<Pick<User, 'name' | 'passwordHash' | 'isSuperuser'>>,
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
