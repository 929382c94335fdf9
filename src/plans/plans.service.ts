import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { isUUID } from 'class-validator';
import { recordAudit } from '../audit/audit-log';
import { BadRequestError, FieldErrors, NotFoundError, ValidationError } from '../common/errors/api-error';
import { checkMoney } from '../common/money/money';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { SplitService } from '../split/split.service';
import { parseSplitDocument, SplitCell } from '../split/split-table';
import type { Table } from '../split/table';
import { CreateSplitPlanDto, RatePlanResponseDto, SimulateSplitDto, SplitPlanResponseDto } from './dto/plans.dto';
import type { RatePlan } from './entities/rate-plan.entity';
import type { SplitPlan } from './entities/split-plan.entity';
import { PlansRepository } from './plans.repository';
import { ResolutionResponseDto } from './dto/resolution.dto';

/** The most labels a new plan's cell shares a payment among, as a seller names at most 50 split participants. */
export const MAX_CELL_LABELS = 50;

/**
 * A rule of new plans only (plans stored before it still resolve): each label becomes a share of
 * every transaction the cell prices, and 3,000 of them made each such transaction 275 KB.
 */
function limitCellLabels(table: Table<SplitCell>, field: string, errors: FieldErrors): void {
  for (const [key, cells] of table) {
    for (const [brand, cell] of cells) {
      if (cell.labels.length > MAX_CELL_LABELS) {
        errors[`${field}.${key}.${brand}`] = [`must have at most ${MAX_CELL_LABELS} labels`];
      }
    }
  }
}

/** Rate plans (read-only here) and split plans (create, read, simulate). */
@Injectable()
export class PlansService {
  constructor(
    private readonly plans: PlansRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly split: SplitService,
  ) {}

  async listRatePlans(page: PageRequest, search?: string): Promise<Page<RatePlanResponseDto>> {
    return toPage(await this.plans.listRatePlans(page, search), page, (p) => p.seq, RatePlanResponseDto.of);
  }

  async getRatePlan(id: string): Promise<RatePlanResponseDto> {
    return RatePlanResponseDto.of(await this.ratePlan(id));
  }

  async ratePlan(id: string): Promise<RatePlan> {
    const plan = await this.plans.findRatePlan(id);
    if (!plan) throw new NotFoundError('Rate plan not found.', 'rate_plan_not_found');
    return plan;
  }

  findRatePlan(id: string): Promise<RatePlan | null> {
    return this.plans.findRatePlan(id);
  }

  findSplitPlan(id: string): Promise<SplitPlan | null> {
    return this.plans.findSplitPlan(id);
  }

  async splitPlan(id: string): Promise<SplitPlan> {
    const plan = await this.plans.findSplitPlan(id);
    if (!plan) throw new NotFoundError('Split plan not found.', 'split_plan_not_found');
    return plan;
  }

  async createSplitPlan(input: CreateSplitPlanDto): Promise<SplitPlanResponseDto> {
    const errors: FieldErrors = {};
    const cardPresent = parseSplitDocument(input.split_details, 'split_details', errors);
    const online = parseSplitDocument(input.split_details_online, 'split_details_online', errors);
    limitCellLabels(cardPresent.table, 'split_details', errors);
    limitCellLabels(online.table, 'split_details_online', errors);
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    if (!isUUID(input.rate_plan) || !(await this.plans.findRatePlan(input.rate_plan))) {
      throw new BadRequestError('rate_plan_not_found', 'The rate plan does not exist.');
    }
    return requestTransaction(this.dataSource, async (manager) => {
      const plan = await this.plans.createSplitPlan(
        {
          name: input.name.trim(),
          ratePlanId: input.rate_plan.toLowerCase(), // as every later read answers it
          splitDetails: cardPresent.normalized,
          splitDetailsOnline: online.normalized,
        },
        manager,
      );
      // Split plans are global commercial terms: who created which is audited like a seller's terms.
      await recordAudit(manager, {
        action: 'split_plan.created',
        sellerId: null,
        target: { type: 'split_plan', id: plan.id },
        changes: { name: { from: null, to: plan.name }, rate_plan: { from: null, to: plan.ratePlanId } },
      });
      return SplitPlanResponseDto.of(plan);
    });
  }

  async listSplitPlans(page: PageRequest, search?: string): Promise<Page<SplitPlanResponseDto>> {
    return toPage(await this.plans.listSplitPlans(page, search), page, (p) => p.seq, SplitPlanResponseDto.of);
  }

  async getSplitPlan(id: string): Promise<SplitPlanResponseDto> {
    return SplitPlanResponseDto.of(await this.splitPlan(id));
  }

  /** What a payment would resolve to under this split plan and its rate plan (no recipients). */
  async simulate(id: string, input: SimulateSplitDto): Promise<ResolutionResponseDto> {
    const splitPlan = await this.splitPlan(id);
    const ratePlan = await this.ratePlan(splitPlan.ratePlanId);
    const amount = checkMoney(input.amount);
    if (!amount.ok) throw ValidationError.of('amount', amount.message);
    const resolution = this.split.resolve(
      {
        amount: amount.value,
        paymentType: input.payment_type,
        installments: input.installments ?? 1,
        brand: input.card_brand ?? null,
        entryMode: input.entry_mode ?? 'online',
      },
      ratePlan,
      splitPlan,
    );
    return ResolutionResponseDto.of(resolution);
  }
}
