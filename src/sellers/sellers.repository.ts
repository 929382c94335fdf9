import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import type { Permission } from '../auth/permissions';
import { Access } from './entities/access.entity';
import { Seller } from './entities/seller.entity';
import { Subaccount } from './entities/subaccount.entity';

export interface SellerAccess {
  sellerExists: boolean;
  /** The user's permissions on the seller, or null without an access entry. */
  permissions: Permission[] | null;
}

/** SQL of sellers, sub-accounts and the access table. Seller-owned rows are read by seller id. */
@Injectable()
export class SellersRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Seller) private readonly sellers: Repository<Seller>,
    @InjectRepository(Subaccount) private readonly subaccounts: Repository<Subaccount>,
    @InjectRepository(Access) private readonly accesses: Repository<Access>,
  ) {}

  // ---- sellers

  createSeller(input: Pick<Seller, 'name' | 'document' | 'email'>, manager?: EntityManager): Promise<Seller> {
    const repo = manager?.getRepository(Seller) ?? this.sellers;
    return repo.save(repo.create({ ...input, splitParticipants: {} }));
  }

  findSellerByDocument(document: string): Promise<Seller | null> {
    return this.sellers.findOneBy({ document });
  }

  findSeller(id: string): Promise<Seller | null> {
    return this.sellers.findOneBy({ id });
  }

  async updateSeller(
    id: string,
    changes: Partial<
      Pick<Seller, 'name' | 'email' | 'ratePlanId' | 'splitPlanId' | 'developerAccount' | 'splitParticipants'>
    >,
  ): Promise<void> {
    await this.sellers.update({ id }, changes);
  }

  /** Sellers of a page; for a user who is not a superuser, only those with an access entry. */
  listSellers(page: PageRequest, visibleTo: string | null): Promise<Seller[]> {
    const query = this.sellers.createQueryBuilder('s');
    if (visibleTo) query.innerJoin(Access, 'a', 'a.seller_id = s.id AND a.user_id = :userId', { userId: visibleTo });
    return applyKeyset(query, 's.seq', page).getMany();
  }

  /** The ids among `ids` that are no unified account (seller or sub-account). */
  async unknownAccounts(ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT wanted.id::text AS id FROM unnest($1::uuid[]) AS wanted(id)
       WHERE NOT EXISTS (SELECT 1 FROM sellers s WHERE s.id = wanted.id)
         AND NOT EXISTS (SELECT 1 FROM subaccounts a WHERE a.id = wanted.id)`,
      [ids],
    );
    return rows.map((r) => r.id);
  }

  // ---- sub-accounts

  createSubaccount(manager: EntityManager, sellerId: string, name: string): Promise<Subaccount> {
    const repo = manager.getRepository(Subaccount);
    return repo.save(repo.create({ sellerId, name }));
  }

  listSubaccounts(sellerId: string, page: PageRequest): Promise<Subaccount[]> {
    const query = this.subaccounts.createQueryBuilder('a').where('a.seller_id = :sellerId', { sellerId });
    return applyKeyset(query, 'a.seq', page).getMany();
  }

  // ---- access table

  /** Whether the seller exists and the user's permissions there, in one lookup. */
  async sellerAccess(sellerId: string, userId: string): Promise<SellerAccess> {
    const rows: Array<{ permissions: Permission[] | null }> = await this.dataSource.query(
      `SELECT a.permissions FROM sellers s
       LEFT JOIN accesses a ON a.seller_id = s.id AND a.user_id = $2
       WHERE s.id = $1`,
      [sellerId, userId],
    );
    return rows.length === 0
      ? { sellerExists: false, permissions: null }
      : { sellerExists: true, permissions: rows[0].permissions };
  }

  async sellerExists(sellerId: string): Promise<boolean> {
    return (await this.dataSource.query('SELECT 1 FROM sellers WHERE id = $1', [sellerId])).length > 0;
  }

  accessesOfUser(userId: string): Promise<Access[]> {
    return this.accesses.find({ where: { userId }, order: { createdAt: 'ASC' } });
  }

  findAccess(sellerId: string, id: string): Promise<Access | null> {
    return this.accesses.findOneBy({ sellerId, id });
  }

  createAccess(input: Pick<Access, 'userId' | 'sellerId' | 'permissions'>, manager?: EntityManager): Promise<Access> {
    const repo = manager?.getRepository(Access) ?? this.accesses;
    return repo.save(repo.create(input));
  }

  async updateAccess(sellerId: string, id: string, permissions: Permission[]): Promise<void> {
    await this.accesses.update({ sellerId, id }, { permissions });
  }

  async deleteAccess(sellerId: string, id: string): Promise<void> {
    await this.accesses.delete({ sellerId, id });
  }

  listAccesses(sellerId: string, page: PageRequest): Promise<Access[]> {
    const query = this.accesses.createQueryBuilder('a').where('a.seller_id = :sellerId', { sellerId });
    return applyKeyset(query, 'a.seq', page).getMany();
  }
}
