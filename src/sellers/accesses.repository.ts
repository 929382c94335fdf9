import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import type { Permission } from '../auth/permissions';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import { Access } from './entities/access.entity';

export interface SellerAccess {
  sellerExists: boolean;
  /** The user's permissions on the seller, or null without an access entry. */
  permissions: Permission[] | null;
}

/** How many (user, seller) accesses a process keeps; the oldest entry goes first. */
const CACHED_ACCESSES = 10_000;

/**
 * SQL of the access table, and the one door through which authorisation reads a user's access
 * to a seller (`accessOf`). That read is cached per user and seller, keyed by the user's
 * `access_version`: the database bumps it whenever one of the user's entries is written, and
 * the guard reads it with the user on every request, so a cached access is used only while no
 * entry of that user has changed, in whichever process. Sellers are never deleted, so a seller
 * once seen to exist is remembered.
 */
@Injectable()
export class AccessesRepository {
  private readonly cache = new Map<string, { version: string; access: SellerAccess }>();
  private readonly knownSellers = new Set<string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Access) private readonly accesses: Repository<Access>,
  ) {}

  /** Whether the seller exists and the user's permissions there, as of `accessVersion` of the user. */
  async accessOf(userId: string, sellerId: string, accessVersion: string): Promise<SellerAccess> {
    const key = `${userId}:${sellerId}`;
    const cached = this.cache.get(key);
    if (cached?.version === accessVersion) return cached.access;
    const rows: Array<{ permissions: Permission[] | null }> = await this.dataSource.query(
      `SELECT a.permissions FROM sellers s
       LEFT JOIN accesses a ON a.seller_id = s.id AND a.user_id = $2
       WHERE s.id = $1`,
      [sellerId, userId],
    );
    const access: SellerAccess =
      rows.length === 0
        ? { sellerExists: false, permissions: null }
        : { sellerExists: true, permissions: rows[0].permissions };
    this.cache.delete(key);
    if (this.cache.size >= CACHED_ACCESSES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { version: accessVersion, access });
    if (access.sellerExists) this.rememberSeller(sellerId);
    return access;
  }

  async sellerExists(sellerId: string): Promise<boolean> {
    if (this.knownSellers.has(sellerId)) return true;
    const exists = (await this.dataSource.query('SELECT 1 FROM sellers WHERE id = $1', [sellerId])).length > 0;
    if (exists) this.rememberSeller(sellerId);
    return exists;
  }

  accessesOfUser(userId: string): Promise<Access[]> {
    return this.accesses.find({ where: { userId }, order: { createdAt: 'ASC' } });
  }

  findForSeller(sellerId: string, id: string, manager?: EntityManager): Promise<Access | null> {
    return (manager?.getRepository(Access) ?? this.accesses).findOneBy({ sellerId, id });
  }

  /** The entry, locked until the end of the caller's transaction. */
  lockForSeller(manager: EntityManager, sellerId: string, id: string): Promise<Access | null> {
    return manager.getRepository(Access).findOne({ where: { sellerId, id }, lock: { mode: 'pessimistic_write' } });
  }

  create(manager: EntityManager, input: Pick<Access, 'userId' | 'sellerId' | 'permissions'>): Promise<Access> {
    const repo = manager.getRepository(Access);
    return repo.save(repo.create(input));
  }

  async updatePermissions(
    manager: EntityManager,
    sellerId: string,
    id: string,
    permissions: Permission[],
  ): Promise<void> {
    await manager.getRepository(Access).update({ sellerId, id }, { permissions });
  }

  async delete(manager: EntityManager, sellerId: string, id: string): Promise<void> {
    await manager.getRepository(Access).delete({ sellerId, id });
  }

  listForSeller(sellerId: string, page: PageRequest): Promise<Access[]> {
    const query = this.accesses.createQueryBuilder('a').where('a.seller_id = :sellerId', { sellerId });
    return applyKeyset(query, 'a.seq', page).getMany();
  }

  private rememberSeller(sellerId: string): void {
    if (this.knownSellers.size >= CACHED_ACCESSES) this.knownSellers.clear();
    this.knownSellers.add(sellerId);
  }
}
