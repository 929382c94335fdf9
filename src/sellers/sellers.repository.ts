import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import { RowMapper } from '../database/row-mapper';
import { Access } from './entities/access.entity';
import { Seller } from './entities/seller.entity';
import { Subaccount } from './entities/subaccount.entity';

/** SQL of sellers and sub-accounts (the access table: AccessesRepository). Seller-owned rows are read by seller id. */
@Injectable()
export class SellersRepository {
  private readonly sellerRows: RowMapper<Seller>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Seller) private readonly sellers: Repository<Seller>,
    @InjectRepository(Subaccount) private readonly subaccounts: Repository<Subaccount>,
  ) {
    this.sellerRows = new RowMapper(sellers.metadata);
  }

  // ---- sellers

  createSeller(input: Pick<Seller, 'name' | 'document' | 'email'>, manager?: EntityManager): Promise<Seller> {
    const repo = manager?.getRepository(Seller) ?? this.sellers;
    return repo.save(repo.create({ ...input, splitParticipants: {} }));
  }

  findSellerByDocument(document: string): Promise<Seller | null> {
    return this.sellers.findOneBy({ document });
  }

  /** Read on every charge: without the query builder. */
  findSeller(id: string, manager: EntityManager = this.dataSource.manager): Promise<Seller | null> {
    return this.sellerRows.one(manager, 's', 's.id = $1', [id]);
  }

  /** The seller, locked until the end of the caller's transaction. */
  lockSeller(manager: EntityManager, id: string): Promise<Seller | null> {
    return manager.getRepository(Seller).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async updateSeller(
    manager: EntityManager,
    id: string,
    changes: Partial<
      Pick<Seller, 'name' | 'email' | 'ratePlanId' | 'splitPlanId' | 'developerAccount' | 'splitParticipants'>
    >,
  ): Promise<void> {
    await manager.getRepository(Seller).update({ id }, changes);
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
}
