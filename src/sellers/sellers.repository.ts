import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import { RowMapper } from '../database/row-mapper';
import { RatePlan } from '../plans/entities/rate-plan.entity';
import { SplitPlan } from '../plans/entities/split-plan.entity';
import { Access } from './entities/access.entity';
import { Seller } from './entities/seller.entity';
import { Subaccount } from './entities/subaccount.entity';

/** A seller with the plans its payments are priced and split by (null: none set). */
export interface SellerWithPlans {
  seller: Seller;
  ratePlan: RatePlan | null;
  splitPlan: SplitPlan | null;
}

/** SQL of sellers and sub-accounts (the access table: AccessesRepository). Seller-owned rows are read by seller id. */
@Injectable()
export class SellersRepository {
  private readonly sellerRows: RowMapper<Seller>;
  private readonly ratePlanRows: RowMapper<RatePlan>;
  private readonly splitPlanRows: RowMapper<SplitPlan>;
  private readonly withPlansSql: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Seller) private readonly sellers: Repository<Seller>,
    @InjectRepository(Subaccount) private readonly subaccounts: Repository<Subaccount>,
  ) {
    this.sellerRows = new RowMapper(sellers.metadata);
    this.ratePlanRows = new RowMapper(dataSource.getMetadata(RatePlan));
    this.splitPlanRows = new RowMapper(dataSource.getMetadata(SplitPlan));
    this.withPlansSql = `SELECT ${this.sellerRows.select('s')}, ${this.ratePlanRows.select('r', 'r__')},
              ${this.splitPlanRows.select('p', 'p__')}
         FROM sellers s
         LEFT JOIN rate_plans r ON r.id = s.rate_plan_id
         LEFT JOIN split_plans p ON p.id = s.split_plan_id
        WHERE s.id = $1`;
  }

  // ---- sellers

  createSeller(input: Pick<Seller, 'name' | 'document' | 'email'>, manager?: EntityManager): Promise<Seller> {
    const repo = manager?.getRepository(Seller) ?? this.sellers;
    return repo.save(repo.create({ ...input, splitParticipants: {} }));
  }

  findSellerByDocument(document: string): Promise<Seller | null> {
    return this.sellers.findOneBy({ document });
  }

  /** Without the query builder (a plain read by id). */
  findSeller(id: string): Promise<Seller | null> {
    return this.sellerRows.one(this.dataSource.manager, 's', 's.id = $1', [id]);
  }

  /** The seller with its rate and split plans, in one statement (one snapshot): read on every charge. */
  async findSellerWithPlans(id: string): Promise<SellerWithPlans | null> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(this.withPlansSql, [id]);
    if (rows.length === 0) return null;
    const row = rows[0];
    return {
      seller: this.sellerRows.map(row),
      ratePlan: row.r__id === null ? null : this.ratePlanRows.map(row, 'r__'),
      splitPlan: row.p__id === null ? null : this.splitPlanRows.map(row, 'p__'),
    };
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
