import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Permission } from '../auth/permissions';
import { recordAudit } from '../audit/audit-log';
import { changedFields } from '../audit/changes';
import { AuthorizationService } from '../auth/authorization.service';
import { CredentialCache } from '../auth/credential-cache';
import type { Principal } from '../auth/principal';
import {
  BadRequestError,
  ConflictError,
  FieldErrors,
  NotFoundError,
  ValidationError,
} from '../common/errors/api-error';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { PlansService } from '../plans/plans.service';
import { VirtualAccountsService } from '../virtual-accounts/virtual-accounts.service';
import { normaliseDocument } from './document';
import { CreateSellerDto, SellerResponseDto, UpdateSellerDto } from './dto/seller.dto';
import { SubaccountResponseDto } from './dto/subaccount.dto';
import { Seller } from './entities/seller.entity';
import { AccessesRepository } from './accesses.repository';
import { SellersRepository, SellerWithPlans } from './sellers.repository';
import { isUniqueViolation } from '../common/errors/database-errors';

const COMMERCIAL_TERMS = ['rate_plan', 'split_plan', 'developer_account', 'split_participants'] as const;

/**
 * The change with the ids of its commercial terms in the form the database gives them back (lower
 * case): stored, compared with the seller's and audited alike, whatever case they were sent in
 * (`split_participants` is JSON, which keeps the case it is given).
 */
function withCanonicalIds(changes: UpdateSellerDto): UpdateSellerDto {
  const canonical = { ...changes };
  if (typeof changes.rate_plan === 'string') canonical.rate_plan = changes.rate_plan.toLowerCase();
  if (typeof changes.split_plan === 'string') canonical.split_plan = changes.split_plan.toLowerCase();
  if (typeof changes.developer_account === 'string') {
    canonical.developer_account = changes.developer_account.toLowerCase();
  }
  if (changes.split_participants) {
    canonical.split_participants = Object.fromEntries(
      Object.entries(changes.split_participants).map(([label, account]) => [label, account.toLowerCase()]),
    );
  }
  return canonical;
}

@Injectable()
export class SellersService {
  constructor(
    private readonly sellers: SellersRepository,
    private readonly accesses: AccessesRepository,
    private readonly authorization: AuthorizationService,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly plans: PlansService,
    private readonly virtualAccounts: VirtualAccountsService,
    private readonly credentials: CredentialCache,
  ) {}

  async create(input: CreateSellerDto): Promise<SellerResponseDto> {
    const document = normaliseDocument(input.document);
    if (!document) throw ValidationError.of('document', 'must be a valid CPF (11 digits) or CNPJ (14 digits)');
    try {
      return await requestTransaction(this.dataSource, async (manager) => {
        const seller = await this.sellers.createSeller(
          { name: input.name.trim(), document: document.digits, email: input.email.toLowerCase() },
          manager,
        );
        await recordAudit(manager, {
          action: 'seller.created',
          sellerId: seller.id,
          target: { type: 'seller', id: seller.id },
          changes: { name: { from: null, to: seller.name }, email: { from: null, to: seller.email } },
        });
        return SellerResponseDto.of(seller);
      });
    } catch (error) {
      if (isUniqueViolation(error, 'sellers_document')) {
        throw new ConflictError('seller_exists', 'A seller with this document already exists.');
      }
      throw error;
    }
  }

  /** Sellers the principal can see: all for superusers, those with an access entry for others. */
  async list(principal: Principal, page: PageRequest): Promise<Page<SellerResponseDto>> {
    const visibleTo = principal.kind === 'user' && !principal.isSuperuser ? principal.id : null;
    return toPage(await this.sellers.listSellers(page, visibleTo), page, (s) => s.seq, SellerResponseDto.of);
  }

  async get(id: string): Promise<SellerResponseDto> {
    return SellerResponseDto.of(await this.find(id));
  }

  /** The seller record (plans, developer account, split participants). */
  async find(id: string): Promise<Seller> {
    const seller = await this.sellers.findSeller(id);
    if (!seller) throw new NotFoundError('Seller not found.', 'seller_not_found');
    return seller;
  }

  /**
   * The seller with its rate and split plans, read together, as a charge prices and splits by
   * them: read by every charge, so cached per process (CredentialCache, which drops an entry when
   * the seller or a rate plan changes). The objects are shared: callers only read them.
   */
  async findWithPlans(id: string): Promise<SellerWithPlans> {
    const found = await this.credentials.sellerTermsOf(id, () => this.sellers.findSellerWithPlans(id));
    if (!found) throw new NotFoundError('Seller not found.', 'seller_not_found');
    return found;
  }

  async findByDocument(document: string): Promise<SellerResponseDto | null> {
    const seller = await this.sellers.findSellerByDocument(document);
    return seller ? SellerResponseDto.of(seller) : null;
  }

  /** The ids among `ids` that name no unified account (seller or sub-account). */
  unknownAccounts(ids: string[]): Promise<string[]> {
    return this.sellers.unknownAccounts(ids);
  }

  /**
   * `seller.manage` edits `name` and `email`; the commercial terms (`rate_plan`, `split_plan`,
   * `developer_account`, `split_participants`) are the platform's: superusers only, and audited.
   */
  async update(principal: Principal, id: string, input: UpdateSellerDto): Promise<SellerResponseDto> {
    if (COMMERCIAL_TERMS.some((term) => input[term] !== undefined)) this.authorization.requireSuperuser(principal);
    const changes = withCanonicalIds(input);
    const participants = changes.split_participants;
    await this.checkAccountsExist(changes.developer_account, participants);

    await this.dataSource.transaction(async (manager) => {
      const before = await this.sellers.lockSeller(manager, id);
      if (!before) throw new NotFoundError('Seller not found.', 'seller_not_found');
      // Checked against the locked row: a concurrent change of the other plan cannot slip between
      // the check and the write (a split plan of another rate plan than the seller's).
      const plans = await this.checkPlans(before, changes);
      const patch = {
        ...plans,
        ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
        ...(changes.email !== undefined ? { email: changes.email.toLowerCase() } : {}),
        ...(changes.developer_account !== undefined ? { developerAccount: changes.developer_account } : {}),
        ...(participants !== undefined ? { splitParticipants: participants } : {}),
      };
      // Nothing written (nor `updated_at` moved) when nothing differs.
      if (Object.keys(changedFields({ ...before }, patch)).length > 0) {
        await this.sellers.updateSeller(manager, id, patch);
      }
      const terms = changedFields(
        {
          rate_plan: before.ratePlanId,
          split_plan: before.splitPlanId,
          developer_account: before.developerAccount,
          split_participants: before.splitParticipants,
        },
        {
          rate_plan: plans.ratePlanId,
          split_plan: plans.splitPlanId,
          developer_account: changes.developer_account,
          split_participants: participants,
        },
      );
      if (Object.keys(terms).length > 0) {
        await recordAudit(manager, {
          action: 'seller.commercial_terms_changed',
          sellerId: id,
          target: { type: 'seller', id },
          changes: terms,
        });
      }
    });
    this.credentials.sellerChanged(id);
    return this.get(id);
  }

  /**
   * The unified accounts a change names must exist: a rule of the database, so checked here;
   * their form (UUIDs, labels) is declared on UpdateSellerDto.
   */
  private async checkAccountsExist(
    developerAccount: string | null | undefined,
    participants: Record<string, string> | undefined,
  ): Promise<void> {
    const wanted = [...(developerAccount ? [developerAccount] : []), ...Object.values(participants ?? {})];
    if (wanted.length === 0) return;
    const unknown = new Set(await this.sellers.unknownAccounts(wanted));
    const problems: FieldErrors = {};
    if (developerAccount && unknown.has(developerAccount)) {
      problems.developer_account = ['must be an existing unified account'];
    }
    for (const [label, account] of Object.entries(participants ?? {})) {
      if (unknown.has(account)) problems[`split_participants.${label}`] = ['must be an existing unified account'];
    }
    if (Object.keys(problems).length > 0) throw new ValidationError(problems);
  }

  /**
   * The seller's plans after the change: both must exist, and the split plan must distribute
   * the seller's rate plan (spec 2.3: a split plan is applied on top of its rate plan).
   */
  private async checkPlans(
    current: { ratePlanId: string | null; splitPlanId: string | null },
    changes: UpdateSellerDto,
  ): Promise<{ ratePlanId?: string | null; splitPlanId?: string | null }> {
    if (changes.rate_plan === undefined && changes.split_plan === undefined) return {};
    const ratePlanId = changes.rate_plan !== undefined ? changes.rate_plan : current.ratePlanId;
    const splitPlanId = changes.split_plan !== undefined ? changes.split_plan : current.splitPlanId;
    if (changes.rate_plan) {
      const ratePlan = await this.plans.findRatePlan(changes.rate_plan);
      if (!ratePlan) throw new BadRequestError('rate_plan_not_found', 'The rate plan does not exist.');
      // A retired plan prices no new charge: no seller is moved onto it (one already on it keeps it).
      if (!ratePlan.active && ratePlan.id !== current.ratePlanId) {
        throw new BadRequestError('rate_plan_inactive', 'The rate plan is inactive; choose an active one.');
      }
    }
    if (splitPlanId) {
      const splitPlan = await this.plans.findSplitPlan(splitPlanId);
      if (!splitPlan) throw new BadRequestError('split_plan_not_found', 'The split plan does not exist.');
      if (splitPlan.ratePlanId !== ratePlanId) {
        throw new BadRequestError(
          'split_plan_rate_plan_mismatch',
          `The split plan distributes rate plan ${splitPlan.ratePlanId}; set rate_plan to it, or choose a split plan of the seller's rate plan.`,
        );
      }
    }
    return {
      ...(changes.rate_plan !== undefined ? { ratePlanId } : {}),
      ...(changes.split_plan !== undefined ? { splitPlanId } : {}),
    };
  }

  /** A user's accesses, as `/user/me/` lists them. */
  async accessesOfUser(userId: string): Promise<Array<{ seller: string; permissions: Permission[] }>> {
    const accesses = await this.accesses.accessesOfUser(userId);
    return accesses.map((a) => ({ seller: a.sellerId, permissions: a.permissions }));
  }

  /** A sub-account and its virtual account (same id), created together. */
  async createSubaccount(sellerId: string, name: string): Promise<SubaccountResponseDto> {
    return requestTransaction(this.dataSource, async (manager) => {
      const created = await this.sellers.createSubaccount(manager, sellerId, name.trim());
      await this.virtualAccounts.open(manager, { id: created.id, sellerId, name: created.name });
      return SubaccountResponseDto.of(created);
    });
  }

  async listSubaccounts(sellerId: string, page: PageRequest): Promise<Page<SubaccountResponseDto>> {
    const rows = await this.sellers.listSubaccounts(sellerId, page);
    return toPage(
      rows,
      page,
      (s) => s.seq,
      (s) => SubaccountResponseDto.of(s),
    );
  }
}
