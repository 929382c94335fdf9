import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import { RowMapper } from '../database/row-mapper';
import { RatePlan } from './entities/rate-plan.entity';
import { SplitPlan } from './entities/split-plan.entity';

export interface RatePlanImport {
  external_id: string;
  name: string;
  /** Null when the file leaves it out: a new plan gets '', an existing one keeps its own. */
  description: string | null;
  /** Null when the file leaves it out: a new plan is active, an existing one keeps its state. */
  active: boolean | null;
  fees: Record<string, unknown>;
}

@Injectable()
export class PlansRepository {
  private readonly ratePlanRows: RowMapper<RatePlan>;

  constructor(
    @InjectRepository(RatePlan) private readonly ratePlans: Repository<RatePlan>,
    @InjectRepository(SplitPlan) private readonly splitPlans: Repository<SplitPlan>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.ratePlanRows = new RowMapper(ratePlans.metadata);
  }

  /** Without the query builder (a plain read by id). */
  findRatePlan(id: string): Promise<RatePlan | null> {
    return this.ratePlanRows.one(this.dataSource.manager, 'r', 'r.id = $1', [id]);
  }

  listRatePlans(page: PageRequest, search?: string): Promise<RatePlan[]> {
    const query = this.ratePlans.createQueryBuilder('r');
    if (search) query.where(`r.name ILIKE :search ESCAPE '\\'`, { search: containing(search) });
    return applyKeyset(query, 'r.seq', page).getMany();
  }

  /**
   * Upserts one imported rate plan by external_id; an unchanged plan is not written, and a
   * description or active flag the file leaves out (null) is kept. Answers what happened to it.
   */
  async upsertRatePlan(manager: EntityManager, plan: RatePlanImport): Promise<'created' | 'updated' | 'unchanged'> {
    const rows: Array<{ created: boolean }> = await manager.query(
      `INSERT INTO rate_plans (external_id, name, description, active, fees)
       VALUES ($1, $2, coalesce($3::text, ''), coalesce($4::boolean, true), $5)
       ON CONFLICT (external_id) DO UPDATE
         SET name = EXCLUDED.name, description = coalesce($3::text, rate_plans.description),
             active = coalesce($4::boolean, rate_plans.active), fees = EXCLUDED.fees, updated_at = now()
         WHERE (rate_plans.name, rate_plans.description, rate_plans.active, rate_plans.fees)
               IS DISTINCT FROM (EXCLUDED.name, coalesce($3::text, rate_plans.description),
                                 coalesce($4::boolean, rate_plans.active), EXCLUDED.fees)
       RETURNING (xmax = 0) AS created`,
      [plan.external_id, plan.name, plan.description, plan.active, JSON.stringify(plan.fees)],
    );
    if (rows.length === 0) return 'unchanged';
    return rows[0].created ? 'created' : 'updated';
  }

  createSplitPlan(
    input: Pick<SplitPlan, 'name' | 'ratePlanId' | 'splitDetails' | 'splitDetailsOnline'>,
    manager?: EntityManager,
  ): Promise<SplitPlan> {
    const repo = manager?.getRepository(SplitPlan) ?? this.splitPlans;
    return repo.save(repo.create({ ...input, automaticDeveloperFee: true }));
  }

  findSplitPlan(id: string): Promise<SplitPlan | null> {
    return this.splitPlans.findOneBy({ id });
  }

  listSplitPlans(page: PageRequest, search?: string): Promise<SplitPlan[]> {
    const query = this.splitPlans.createQueryBuilder('p');
    if (search) query.where(`p.name ILIKE :search ESCAPE '\\'`, { search: containing(search) });
    return applyKeyset(query, 'p.seq', page).getMany();
  }
}

/** An ILIKE pattern matching names that contain `text` literally. */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}
