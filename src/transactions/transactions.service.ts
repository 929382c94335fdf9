import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AuthorizationService } from '../auth/authorization.service';
import type { Principal } from '../auth/principal';
import { BadRequestError, ConflictError, NotFoundError, ValidationError } from '../common/errors/api-error';
import { isTransientDatabaseError } from '../common/errors/database-errors';
import {
  keepIdempotencyKeyOpen,
  outsideIdempotencyKey,
  requestTransaction,
  resumedResource,
  tieIdempotencyKey,
} from '../common/idempotency/request-transaction';
import { checkMoney, Cents, percentOf } from '../common/money/money';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { instantOf } from '../common/validation/date-time.decorator';
import { assertValid } from '../common/validation/validation.pipe';
import { SellersService } from '../sellers/sellers.service';
import { JobQueue } from '../jobs/job-queue.service';
import { SplitService } from '../split/split.service';
import type { EntryMode, PaymentType } from '../split/table';
import { recordAudit } from '../audit/audit-log';
import { EventType, recordEvent, recordEvents } from '../webhooks/outbox';
import {
  CardDto,
  CardOnFileChargeDto,
  checkSplitAmount,
  CreateSplitRuleDto,
  CreateTransactionDto,
  SplitRuleResponseDto,
  TransactionListQueryDto,
  TransactionResponseDto,
  TransactionSource,
} from './dto/transaction.dto';
import type { Transaction } from './entities/transaction.entity';
import { detectBrand } from './processor/card';
import {
  CardData,
  CardToken,
  ChargeResult,
  ChargeStatus,
  PAYMENT_PROCESSOR,
  PaymentProcessor,
  payableUntilOf,
} from './processor/payment-processor';
import { SettlementRefused, TransactionSettlements } from './transaction-settlements';
import { TransactionFilters, TransactionsRepository } from './transactions.repository';
import { SYSTEM_VOID_REASONS } from './void-reasons';

/** The job that tells the processor of a void; `token` names the void for its acknowledgement. */
interface ProcessorVoid {
  transactionId: string;
  reference: string | null;
  token?: string;
}

/** How a charge made on behalf of another change (a checkout, a subscription) is made. */
export interface ChargeOptions {
  /** A token from tokenizeCard: pays a credit or debit charge instead of `input.card` (subscriptions). */
  cardOnFile?: CardToken;
  /** The charge an earlier attempt of the change began, resumed instead of a new one. */
  resumeOf?: string | null;
  /**
   * Writes the caller's own records in the database transaction that stores the pending charge,
   * before the processor hears of it: both exist, or neither (its failure fails the charge).
   */
  alongside?: (manager: EntityManager, transactionId: string) => Promise<void>;
  /**
   * Until when a pix or boleto charge can be paid: the caller's own window (a checkout's hold, a
   * subscription's dunning), so that what a payer sees stops being payable when the caller stops
   * waiting (see ChargeRequest.payableUntil).
   */
  payableUntil?: Date;
}

/** Tells the processor about a void; queued with the void, retried until the processor answers. */
export const PROCESSOR_VOID_JOB = 'transactions.processor-void';

/** A card charge still pending after this long was interrupted (card charges answer in seconds). */
export const INTERRUPTED_AFTER_MINUTES = 10;

/**
 * How long a run of the reconciler (scheduled every minute) goes on asking the processor; the
 * next run goes on from the charge it stopped after.
 */
export const RECONCILE_RUN_MS = 45_000;

/** A void the processor has not acknowledged after this long is sent to it again. */
export const VOID_UNACKNOWLEDGED_AFTER_MINUTES = 60;

/**
 * Unified transactions: charge through the processor port with the fee and split resolved
 * once and stored, read, void, and split rules. Each change is written with its outbox
 * events in one database transaction.
 */
@Injectable()
export class TransactionsService implements OnModuleInit {
  private readonly logger = new Logger('Transactions');
  /** The charge the last reconciler run stopped after, out of time (see reconcileInterrupted); null: from the oldest. */
  private reconcileFrom: string | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: TransactionsRepository,
    private readonly sellers: SellersService,
    private readonly split: SplitService,
    @Inject(PAYMENT_PROCESSOR) private readonly processor: PaymentProcessor,
    private readonly authorization: AuthorizationService,
    private readonly jobs: JobQueue,
    private readonly settlements: TransactionSettlements,
  ) {}

  onModuleInit(): void {
    this.jobs.define<ProcessorVoid>({
      name: PROCESSOR_VOID_JOB,
      handler: (charge) => this.tellProcessorVoided(charge),
      queue: { retryLimit: 20, retryDelay: 30, retryBackoff: true },
    });
    this.jobs.define({
      name: 'transactions.reconcile-interrupted',
      schedule: '* * * * *',
      handler: async () => {
        await this.reconcileInterrupted();
      },
    });
    this.jobs.define({
      name: 'transactions.expire-unpaid',
      schedule: '* * * * *',
      handler: async () => {
        await this.expireUnpaid(new Date());
      },
    });
    this.jobs.define({
      name: 'transactions.resend-unacknowledged-voids',
      schedule: '*/10 * * * *',
      handler: async () => {
        await this.resendUnacknowledgedVoids();
      },
    });
  }

  /**
   * Charges a payment. Only a charge the API was asked for (`source` 'api') answers the request's
   * Idempotency-Key; one made on behalf of another change (a checkout, a subscription) keeps
   * apart from it, so that it never records its answer as that request's answer (see ChargeOptions).
   */
  create(
    sellerId: string,
    input: CreateTransactionDto,
    source: TransactionSource = 'api',
    options: ChargeOptions = {},
  ): Promise<TransactionResponseDto> {
    return source === 'api'
      ? this.createCharge(sellerId, input, source, options, resumedResource())
      : outsideIdempotencyKey(() => this.createCharge(sellerId, input, source, options, options.resumeOf ?? null));
  }

  /** `resumed`: the pending transaction of an interrupted earlier attempt of this charge, resumed instead of a new one. */
  private async createCharge(
    sellerId: string,
    input: CreateTransactionDto,
    source: TransactionSource,
    { cardOnFile, alongside, payableUntil }: ChargeOptions,
    resumed: string | null,
  ): Promise<TransactionResponseDto> {
    const payment = { ...(await this.checkPayment(input, cardOnFile)), payableUntil };
    if (resumed) return this.resume(sellerId, resumed, payment, input);
    const { ratePlan, splitPlan, resolution } = await this.resolveForSeller(sellerId, input.payment_type, payment);

    // 1. The transaction is stored first, as pending, so that no charge can exist without it. The
    // request's Idempotency-Key is tied to it: a retry after a crash resumes it (see resume).
    const record: Partial<Transaction> & { id: string } = {
      id: randomUUID(),
      sellerId,
      amount: payment.amount,
      currency: 'BRL',
      paymentType: input.payment_type,
      installments: payment.installments,
      cardBrand: payment.brand,
      cardLast4: payment.card ? payment.card.number.slice(-4) : (cardOnFile?.last4 ?? null),
      entryMode: payment.entryMode,
      status: 'pending',
      description: input.description ?? null,
      source,
      reference: input.reference ?? null,
      customer: input.customer ? { ...input.customer } : null,
      ratePlanId: ratePlan.id,
      splitPlanId: splitPlan?.id ?? null,
      feePercentage: resolution.fee.units,
      feeFixed: resolution.fee.fixed,
      feeAmount: resolution.fee.amount,
      shares: resolution.shares,
      developerAmount: resolution.developerAmount,
      participantsAmount: resolution.participantsAmount,
      sellerNet: resolution.sellerNet,
      processor: this.processor.name,
    };
    await this.dataSource.transaction(async (manager) => {
      await this.transactions.insert(manager, record);
      await alongside?.(manager, record.id);
      await tieIdempotencyKey(manager, record.id);
    });
    return this.charge(record.id, payment, input);
  }

  /**
   * Checks that the seller can take this charge now, as `create` would, and writes nothing: the
   * same refusals (400 `seller_has_no_rate_plan`, `rate_plan_inactive`,
   * `payment_method_not_accepted`, `negative_seller_net`, `validation_failed`). For a charge
   * made later on a customer's behalf (the first charge of a subscription's trial).
   */
  async checkChargeable(sellerId: string, input: CreateTransactionDto, cardOnFile?: CardToken): Promise<void> {
    await this.resolveForSeller(sellerId, input.payment_type, await this.checkPayment(input, cardOnFile));
  }

  /** The seller's plans and the fee and split of a payment under them; refused when the seller cannot take it. */
  private async resolveForSeller(sellerId: string, paymentType: PaymentType, payment: CheckedPayment) {
    const { seller, ratePlan, splitPlan } = await this.sellers.findWithPlans(sellerId);
    if (!ratePlan) {
      throw new BadRequestError(
        'seller_has_no_rate_plan',
        'The seller has no rate plan, so it cannot take payments yet.',
      );
    }
    if (!ratePlan.active) throw new BadRequestError('rate_plan_inactive', "The seller's rate plan is inactive.");
    const resolution = this.split.resolve(
      {
        amount: payment.amount,
        paymentType,
        installments: payment.installments,
        brand: payment.brand,
        entryMode: payment.entryMode,
      },
      ratePlan,
      splitPlan,
      { developerAccount: seller.developerAccount, participants: seller.splitParticipants },
    );
    return { ratePlan, splitPlan, resolution };
  }

  /**
   * 2. The processor charges, with the transaction id as its idempotency key; 3. its answer settles
   * the transaction. A processor error leaves the outcome unknown (it may have charged): the
   * transaction stays pending and is answered so; the reconciler, or a retry with the same
   * Idempotency-Key, asks the processor what became of it. Never recorded declined on a guess.
   */
  private async charge(
    id: string,
    payment: CheckedPayment,
    input: CreateTransactionDto,
  ): Promise<TransactionResponseDto> {
    let charge: ChargeResult;
    try {
      charge = await this.processor.charge({
        transactionId: id,
        amount: payment.amount,
        paymentType: input.payment_type,
        installments: payment.installments,
        card: payment.card,
        cardToken: payment.cardToken,
        description: input.description ?? null,
        customer: input.customer ?? null,
        payableUntil: payment.payableUntil,
      });
    } catch (error) {
      this.logger.error({ err: error, transaction: id }, 'The payment processor failed; outcome unknown');
      return this.unresolved(id);
    }
    return this.settleAnswer(id, charge);
  }

  /**
   * A retry of a charge whose earlier attempt was interrupted after its pending transaction was
   * written: asks the processor what became of that charge and settles it, or charges it now under
   * the same idempotency key when the processor never received it. Never a second transaction.
   */
  private async resume(
    sellerId: string,
    id: string,
    payment: CheckedPayment,
    input: CreateTransactionDto,
  ): Promise<TransactionResponseDto> {
    const tx = await this.transactions.findForSeller(sellerId, id);
    if (!tx) throw transactionNotFound();
    if (tx.status !== 'pending' || tx.processorReference !== null) return this.settle(id, null);
    let known: ChargeStatus | null;
    try {
      known = await this.processor.chargeStatus(id);
    } catch (error) {
      this.logger.error({ err: error, transaction: id }, 'The payment processor did not say what became of a charge');
      return this.unresolved(id);
    }
    return known ? this.settleAnswer(id, known) : this.charge(id, payment, input);
  }

  /**
   * Settles the processor's answer to a charge being asked for. When it cannot be recorded now (the
   * row locked too long, the database gone), the processor may have charged: the charge is answered
   * pending, never "try again" (a retry without the Idempotency-Key would charge twice); a retry
   * with the key, or the reconciler, asks the processor again and records its answer.
   */
  private async settleAnswer(id: string, charge: ChargeStatus): Promise<TransactionResponseDto> {
    try {
      return await this.settle(id, charge);
    } catch (error) {
      if (!isTransientDatabaseError(error)) throw error;
      // A checkout's or a subscription's settlement hands its records to its request before the
      // commit: rolled back, they do not exist, and that request answers the error itself.
      const tx = await this.transactions.findById(id);
      if (tx?.source !== 'api') throw error;
      this.logger.error(
        { err: error, transaction: id },
        "The processor's answer could not be recorded; reconciled later",
      );
      return this.unresolved(tx);
    }
  }

  /** The answer to a charge whose outcome is unknown: the pending transaction; the key stays open. */
  private async unresolved(charge: string | Transaction): Promise<TransactionResponseDto> {
    keepIdempotencyKeyOpen();
    const tx = typeof charge === 'string' ? (await this.transactions.findById(charge))! : charge;
    return this.viewOf(this.dataSource.manager, tx);
  }

  /**
   * Records what the processor said of a pending charge (null: nothing new), with its events, in
   * one database transaction, and answers the transaction as it then is. A charge the reconciler
   * gave up meanwhile is voided at the processor too.
   */
  private async settle(id: string, charge: ChargeStatus | null): Promise<TransactionResponseDto> {
    try {
      return await this.record(id, charge);
    } catch (error) {
      if (!(error instanceof SettlementRefused)) throw error;
      return this.voidRefused(id, charge?.reference ?? null, error.reason);
    }
  }

  private record(id: string, charge: ChargeStatus | null): Promise<TransactionResponseDto> {
    return requestTransaction(this.dataSource, async (manager) => {
      if (charge !== null && charge.status !== 'voided') {
        // The usual case, a first answer: written under the row lock, answered with the rules of its view.
        const at = new Date(); // approved_at and updated_at alike (see writeVoid)
        const answered = await this.transactions.settleUnanswered(manager, id, {
          status: charge.status,
          processorReference: charge.reference,
          declineReason: charge.status === 'declined' ? charge.declineReason : null,
          pix: charge.status === 'pending' ? (charge.pix ?? null) : null,
          boleto: charge.status === 'pending' ? (charge.boleto ?? null) : null,
          payableUntil: charge.status === 'pending' ? payableUntilOf(charge) : null,
          approvedAt: charge.status === 'approved' ? at : null,
          updatedAt: at,
        });
        if (answered) {
          const tx = answered.transaction;
          const view = TransactionResponseDto.of(tx, answered.rules);
          const types: EventType[] = ['transaction.created'];
          if (charge.status === 'approved') types.push('transaction.approved');
          if (charge.status === 'declined') types.push('transaction.declined');
          await recordEvents(
            manager,
            types.map((type) => ({ type, sellerId: tx.sellerId, data: view })),
          );
          await this.settlements.notify(manager, view, 'pending');
          return view;
        }
      }
      const current = (await this.transactions.lockById(manager, id))!;
      if (current.status === 'pending' && (charge?.status === 'approved' || charge?.status === 'declined')) {
        // A charge the processor first answered pending (a card under review, a pix whose
        // notification was lost) and has since decided.
        return this.decide(manager, current, charge);
      }
      const settled = current.status !== 'pending' || current.processorReference !== null;
      if (charge && current.status === 'voided' && (charge.status === 'approved' || charge.status === 'pending')) {
        // Voided (by the reconciler, or the seller) while the processor was still answering: undo
        // the charge there, and await the processor's acknowledgement of this void too.
        const token = await this.queueProcessorVoid(manager, { transactionId: id, reference: charge.reference });
        await this.transactions.awaitVoidAcknowledgement(manager, id, token);
      }
      if (charge?.status === 'voided' && !settled) {
        return this.writeVoid(manager, current, SYSTEM_VOID_REASONS.voidedByProcessor);
      }
      return this.viewOf(manager, current);
    });
  }

  /**
   * A settlement a listener refused (SettlementRefused), rolled back: the charge, still pending,
   * is voided instead, and the processor told (a charge it made is undone).
   */
  private voidRefused(id: string, reference: string | null, reason: string): Promise<TransactionResponseDto> {
    this.logger.warn({ transaction: id, reason }, 'A settlement was refused; the charge is voided');
    return requestTransaction(this.dataSource, async (manager) => {
      const current = (await this.transactions.lockById(manager, id))!;
      if (current.status !== 'pending') return this.viewOf(manager, current);
      return this.writeVoid(manager, current, reason, reference);
    });
  }

  /**
   * Charges still unresolved some minutes after they began were interrupted (a crash, a lost
   * database) or met a processor error whose outcome is unknown: card charges still pending, and
   * pix or boleto charges still without the processor's payment instructions. The processor is
   * asked what became of each: a charge it made is settled (approved or declined; a pix or boleto
   * gets its instructions and waits for payment); one it never received is voided, at the
   * processor too (so that a late charge is undone), so that no customer stays charged for a
   * payment the seller never saw and nothing waits for a payment that cannot come (a checkout's
   * seats go back). A run asks about the charges in age order for up to `runMs` (one at least),
   * and the next run goes on after the last one asked about (from the oldest again once a run
   * reached the newest): a charge the processor cannot answer for, or a slow processor, holds up
   * none behind it. Returns how many were resolved.
   */
  async reconcileInterrupted(olderThanMinutes = INTERRUPTED_AFTER_MINUTES, runMs = RECONCILE_RUN_MS): Promise<number> {
    const stopAt = Date.now() + runMs;
    const startAfter = this.reconcileFrom;
    this.reconcileFrom = null;
    let resolved = 0;
    for await (const stale of this.transactions.interruptedCharges(olderThanMinutes, startAfter)) {
      try {
        if (await this.reconcile(stale.id)) resolved++;
      } catch (error) {
        // One charge that cannot be settled now never holds up the others: it is tried again next run.
        this.logger.error({ err: error, transaction: stale.id }, 'Could not reconcile a charge; tried again later');
      }
      if (Date.now() >= stopAt) {
        this.reconcileFrom = stale.id;
        break;
      }
    }
    return resolved;
  }

  /**
   * Resolves one charge whose charging process is known to be gone (a dead renewal worker), or
   * found stale by reconcileInterrupted: asks the processor, settles what it charged, voids what
   * it never received. False when the processor did not answer or is still working on it.
   */
  async reconcile(id: string): Promise<boolean> {
    let known: ChargeStatus | null;
    try {
      known = await this.processor.chargeStatus(id);
    } catch (error) {
      this.logger.warn({ err: error, transaction: id }, 'The processor did not answer; reconciled later');
      return false;
    }
    // A card charge pending at the processor is still being decided; a pending pix or boleto has
    // its instructions and is settled with them (it then waits for its payment or its expiry).
    if (known?.status === 'pending' && !known.pix && !known.boleto) return false;
    if (known) {
      await this.settle(id, known);
    } else {
      await this.dataSource.transaction(async (manager) => {
        const current = (await this.transactions.lockById(manager, id))!;
        if (current.status === 'pending' && current.processorReference === null) {
          await this.writeVoid(manager, current, SYSTEM_VOID_REASONS.chargeInterrupted);
        }
      });
    }
    return true;
  }

  /**
   * Voids a pending or approved transaction locked by the caller (a seller's void; a charge
   * interrupted, refused, given up by the processor, or not paid in time), with its listeners and
   * events, and queues the processor's void (a late charge is undone too). `reference` is the
   * processor's, when its answer came but was not recorded.
   */
  private async writeVoid(
    manager: EntityManager,
    before: Transaction,
    reason: string | null,
    reference = before.processorReference,
  ): Promise<TransactionResponseDto> {
    const token = await this.queueProcessorVoid(manager, { transactionId: before.id, reference });
    // One clock for the moment and the record's last change (the database's now() is the
    // transaction's start, earlier than this process's clock).
    const at = new Date();
    const voided = await this.transactions.update(manager, before.id, {
      status: 'voided',
      processorReference: reference,
      voidedAt: at,
      voidReason: reason,
      processorVoidToken: token,
      updatedAt: at,
    });
    const view = await this.viewOf(manager, voided);
    await this.recordVoided(manager, before, view);
    await this.settlements.notify(manager, view, before.status);
    return view;
  }

  /**
   * The events of a void: `transaction.voided`, after `transaction.created` when the charge was
   * voided before the processor's first answer (which is what announces a charge), so that no
   * webhook consumer hears of a void of a transaction it never heard of.
   */
  private async recordVoided(manager: EntityManager, before: Transaction, voided: TransactionResponseDto) {
    const unannounced = before.status === 'pending' && before.processorReference === null;
    await recordEvents(manager, [
      ...(unannounced
        ? [
            {
              type: 'transaction.created' as const,
              sellerId: before.sellerId,
              data: await this.viewOf(manager, before),
            },
          ]
        : []),
      { type: 'transaction.voided', sellerId: before.sellerId, data: voided },
    ]);
  }

  /**
   * Queues the job that tells the processor of a void, in the caller's database transaction, and
   * answers its token: the caller records it as the void the processor has still to acknowledge.
   */
  private async queueProcessorVoid(
    manager: EntityManager,
    charge: { transactionId: string; reference: string | null },
  ): Promise<string> {
    const token = randomUUID();
    await this.jobs.send<ProcessorVoid>(PROCESSOR_VOID_JOB, { ...charge, token }, {}, manager);
    return token;
  }

  /**
   * Tells the processor of a void (throws, to be retried, when it does not answer), then records
   * that it took it, unless a later void of the charge was queued meanwhile (a charge that landed
   * after an earlier void): that one is still awaited. Jobs queued before tokens existed have none.
   */
  private async tellProcessorVoided({ transactionId, reference, token }: ProcessorVoid): Promise<void> {
    await this.processor.void({ transactionId, reference });
    if (token) await this.transactions.acknowledgeVoid(transactionId, token);
  }

  /**
   * Sends again the voids the processor has not acknowledged for a while (their job lost, or out
   * of retries while the processor was down), so that no voided charge stays charged. Each is
   * tried once per run; one that fails is tried again next run. Answers how many were acknowledged.
   */
  async resendUnacknowledgedVoids(olderThanMinutes = VOID_UNACKNOWLEDGED_AFTER_MINUTES): Promise<number> {
    let acknowledged = 0;
    for await (const charge of this.transactions.unacknowledgedVoids(olderThanMinutes)) {
      try {
        await this.tellProcessorVoided(charge);
        acknowledged++;
      } catch (error) {
        this.logger.error(
          { err: error, transaction: charge.transactionId },
          'The processor did not take a void; sent again later',
        );
      }
    }
    return acknowledged;
  }

  /**
   * Voids the pix and boleto charges of the API (and the demo seed) still unpaid at the end of their
   * window (`payable_until`): nothing can pay them any more. Charges made for a checkout or a
   * subscription are left to them (they expire the order, or cancel the subscription, at the same
   * time). Answers how many.
   */
  async expireUnpaid(now: Date): Promise<number> {
    let expired = 0;
    for await (const due of this.transactions.unpaidDue(now)) {
      try {
        const voided = await this.dataSource.transaction(async (manager) => {
          const current = (await this.transactions.lockById(manager, due.id))!;
          if (current.status !== 'pending') return false;
          await this.writeVoid(manager, current, SYSTEM_VOID_REASONS.paymentExpired);
          return true;
        });
        if (voided) expired++;
      } catch (error) {
        this.logger.error({ err: error, transaction: due.id }, 'Could not expire an unpaid charge; tried again later');
      }
    }
    return expired;
  }

  /**
   * Locks the transaction for the caller's database transaction, so that no settlement runs
   * meanwhile; true when it is still pending (a charge's outcome still unknown).
   */
  async holdPending(manager: EntityManager, id: string): Promise<boolean> {
    return (await this.transactions.lockById(manager, id))?.status === 'pending';
  }

  /** The transaction exactly as GET shows it (with its active split rules), read in `manager`'s transaction. */
  private async viewOf(manager: EntityManager, tx: Transaction): Promise<TransactionResponseDto> {
    const rules = await this.transactions.activeRules([tx.id], manager);
    return TransactionResponseDto.of(tx, rules.get(tx.id) ?? []);
  }

  async list(
    sellerId: string,
    query: TransactionListQueryDto,
    page: PageRequest,
  ): Promise<Page<TransactionResponseDto>> {
    const rows = await this.transactions.list(sellerId, filtersOf(query), page);
    const rules = await this.transactions.activeRules(rows.map((t) => t.id));
    return toPage(
      rows,
      page,
      (t) => t.seq,
      (t) => TransactionResponseDto.of(t, rules.get(t.id) ?? []),
    );
  }

  async get(sellerId: string, id: string): Promise<TransactionResponseDto> {
    const found = await this.transactions.findWithRulesForSeller(sellerId, id);
    if (!found) throw transactionNotFound();
    return TransactionResponseDto.of(found.transaction, found.rules);
  }

  /**
   * Reverses an approved or pending transaction; exactly one of concurrent voids succeeds. The
   * processor is told by a job queued in the same database transaction (retried until it
   * answers), so the record and the processor cannot end up disagreeing.
   */
  async void(
    sellerId: string,
    id: string,
    reason?: string,
    options: { onlyPending?: boolean } = {},
  ): Promise<TransactionResponseDto> {
    return requestTransaction(this.dataSource, async (manager) => {
      const tx = await this.lockOrFail(manager, sellerId, id);
      if (options.onlyPending && tx.status !== 'pending') {
        throw new ConflictError('invalid_state', `The transaction is ${tx.status}, no longer pending.`);
      }
      const view = await this.voidLocked(manager, tx, reason ?? null);
      if (!view) {
        throw new ConflictError(
          'invalid_state',
          `A ${tx.status} transaction cannot be voided; only approved or pending ones can.`,
        );
      }
      return view;
    });
  }

  /**
   * Locks the seller's transaction in the caller's database transaction, for a void there
   * (`voidLocked`); null when it does not exist. A caller that locks rows of its own too takes
   * this lock first: a settlement of the transaction locks it before what it settles.
   */
  lockForVoid(manager: EntityManager, sellerId: string, id: string): Promise<Transaction | null> {
    return this.transactions.lockForSeller(manager, sellerId, id);
  }

  /**
   * Voids a transaction locked in the caller's database transaction (see `lockForVoid`), with
   * its events, its settlement and its audit entry; null, writing nothing, when it is neither
   * approved nor pending.
   */
  async voidLocked(
    manager: EntityManager,
    tx: Transaction,
    reason: string | null,
  ): Promise<TransactionResponseDto | null> {
    if (tx.status !== 'approved' && tx.status !== 'pending') return null;
    const view = await this.writeVoid(manager, tx, reason);
    await recordAudit(manager, {
      action: 'transaction.voided',
      sellerId: tx.sellerId,
      target: { type: 'transaction', id: tx.id },
      changes: { status: { from: tx.status, to: 'voided' }, void_reason: reason },
    });
    return view;
  }

  /**
   * Adds a split rule. The transaction row is locked while the rules are summed, so that
   * concurrent additions never take more than the seller's net together.
   */
  async addSplitRule(sellerId: string, id: string, input: CreateSplitRuleDto): Promise<SplitRuleResponseDto> {
    const value = checkSplitAmount(input, input.amount);
    if (!value.ok) throw ValidationError.of('amount', value.message);
    if (value.value === 0) throw ValidationError.of('amount', 'must be greater than zero');
    if ((await this.sellers.unknownAccounts([input.recipient])).length > 0) {
      throw new BadRequestError('recipient_not_found', 'The recipient is not an existing unified account.');
    }
    return requestTransaction(this.dataSource, async (manager) => {
      const tx = await this.lockOrFail(manager, sellerId, id);
      if (tx.status === 'voided' || tx.status === 'declined') {
        throw new ConflictError('invalid_state', `A ${tx.status} transaction cannot take split rules.`);
      }
      const cents: Cents = input.amount_type === 'fixed' ? value.value : percentOf(tx.amount, value.value);
      if (cents === 0) throw ValidationError.of('amount', 'comes to less than one cent of this transaction');
      const existing = (await this.transactions.activeRules([id], manager)).get(id) ?? [];
      const taken = existing.reduce((sum, rule) => sum + rule.amountCents, 0);
      if (taken + cents > tx.sellerNet) {
        throw new BadRequestError(
          'split_exceeds_net',
          "The split rules would exceed the seller's net amount of the transaction.",
        );
      }
      const rule = await this.transactions.insertRule(manager, {
        transactionId: id,
        // As stored and as every later read answers it (the client may spell it in upper case).
        recipient: input.recipient.toLowerCase(),
        amountType: input.amount_type,
        fixedAmount: input.amount_type === 'fixed' ? value.value : null,
        percentage: input.amount_type === 'percentage' ? value.value : null,
        amountCents: cents,
      });
      const view = SplitRuleResponseDto.of(rule);
      await recordEvent(manager, 'transaction.split_rule.created', sellerId, { transaction: id, split_rule: view });
      await recordAudit(manager, {
        action: 'transaction.split_rule_created',
        sellerId,
        target: { type: 'split_rule', id: rule.id },
        changes: { transaction: id, recipient: view.recipient, amount: view.amount, amount_type: view.amount_type },
      });
      return view;
    });
  }

  async removeSplitRule(sellerId: string, id: string, ruleId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const tx = await this.lockOrFail(manager, sellerId, id);
      // The rule first: an unknown one is 404 whatever the transaction's state. A known one of a
      // voided or declined transaction stays: the refusal rolls its removal back.
      const removed = await this.transactions.removeRule(manager, id, ruleId);
      if (!removed) throw new NotFoundError('Split rule not found.', 'split_rule_not_found');
      if (tx.status === 'voided' || tx.status === 'declined') {
        throw new ConflictError('invalid_state', `The split rules of a ${tx.status} transaction stay as history.`);
      }
      // What was removed, as the API answered it (API.md section 5: `data` is the record).
      const view = SplitRuleResponseDto.of(removed);
      await recordEvent(manager, 'transaction.split_rule.deleted', sellerId, { transaction: id, split_rule: view });
      await recordAudit(manager, {
        action: 'transaction.split_rule_deleted',
        sellerId,
        target: { type: 'split_rule', id: ruleId },
        changes: { transaction: id, recipient: view.recipient, amount: view.amount, amount_type: view.amount_type },
      });
    });
  }

  /** Sandbox: the principal, with transactions.create on the transaction's seller, marks a pending charge paid. */
  async confirmPending(principal: Principal, id: string): Promise<TransactionResponseDto> {
    const found = await this.transactions.findById(id);
    if (!found) throw transactionNotFound();
    // A transaction of a seller the caller cannot see does not exist for them.
    await this.authorization.authorizeSeller(principal, found.sellerId, {
      permission: 'transactions.create',
      hiddenAs: transactionNotFound(),
    });
    return this.approvePending(id);
  }

  /** A pending pix or boleto charge is paid (processor notification, sandbox confirmation). */
  async approvePending(id: string): Promise<TransactionResponseDto> {
    try {
      return await this.recordPayment(id);
    } catch (error) {
      if (!(error instanceof SettlementRefused)) throw error;
      return this.voidRefused(id, (await this.transactions.findById(id))!.processorReference, error.reason);
    }
  }

  private recordPayment(id: string): Promise<TransactionResponseDto> {
    return requestTransaction(this.dataSource, async (manager) => {
      const tx = await this.transactions.lockById(manager, id);
      if (!tx) throw transactionNotFound();
      if (tx.status !== 'pending') {
        throw new ConflictError(
          'invalid_state',
          `Only pending transactions can be confirmed; this one is ${tx.status}.`,
        );
      }
      if (tx.paymentType !== 'pix' && tx.paymentType !== 'boleto') {
        // A pending card charge has an outcome only the processor knows: the reconciler asks it.
        throw new ConflictError(
          'invalid_state',
          `Only pix and boleto charges are confirmed; a pending ${tx.paymentType} charge is settled by the processor.`,
        );
      }
      if (tx.payableUntil !== null && tx.payableUntil <= new Date()) {
        throw new ConflictError(
          'invalid_state',
          `The ${tx.paymentType} charge could be paid until ${tx.payableUntil.toISOString()}; it can no longer be paid.`,
        );
      }
      return this.decide(manager, tx, { status: 'approved' });
    });
  }

  /**
   * A pending charge (locked by the caller) is decided: paid, or declined by the processor. The
   * change, its listeners and its event are written in the caller's database transaction.
   */
  private async decide(
    manager: EntityManager,
    pending: Transaction,
    outcome: { status: 'approved' } | { status: 'declined'; declineReason: string },
  ): Promise<TransactionResponseDto> {
    const at = new Date(); // approved_at and updated_at alike (see writeVoid)
    const decided = await this.transactions.update(
      manager,
      pending.id,
      outcome.status === 'approved'
        ? { status: 'approved', approvedAt: at, updatedAt: at }
        : { status: 'declined', declineReason: outcome.declineReason, updatedAt: at },
    );
    const view = await this.viewOf(manager, decided);
    await recordEvent(manager, `transaction.${outcome.status}`, pending.sellerId, view);
    await this.settlements.notify(manager, view, pending.status);
    return view;
  }

  private async lockOrFail(manager: EntityManager, sellerId: string, id: string): Promise<Transaction> {
    const tx = await this.transactions.lockForSeller(manager, sellerId, id);
    if (!tx) throw transactionNotFound();
    return tx;
  }

  /**
   * Keeps a card on file with the processor, once CardDto's rules (Luhn, brand, expiry) have
   * passed: answers the token and what may be shown of the card. The card is not charged.
   */
  async tokenizeCard(card: CardDto): Promise<CardToken> {
    return this.processor.tokenizeCard(toCardData(await assertValid(CardDto, card)));
  }

  /**
   * The charge's values, once its DTO's rules (API.md section 8) have passed: CreateTransactionDto's,
   * or with a card on file CardOnFileChargeDto's (a credit or debit charge without a card, which
   * the token stands for). Also for callers in other areas that build the input in code.
   */
  async checkPayment(raw: CreateTransactionDto, cardOnFile?: CardToken): Promise<CheckedPayment> {
    const input = cardOnFile
      ? await assertValid(CardOnFileChargeDto, raw as CardOnFileChargeDto)
      : await assertValid(CreateTransactionDto, raw);
    const amount = checkMoney(input.amount);
    if (!amount.ok) throw ValidationError.of('amount', amount.message);
    const card = 'card' in input && input.card ? toCardData(input.card) : undefined;
    return {
      amount: amount.value,
      installments: input.installments ?? 1,
      entryMode: input.entry_mode ?? 'online',
      brand: card ? detectBrand(card.number) : (cardOnFile?.brand ?? null),
      card,
      cardToken: cardOnFile?.token,
    };
  }
}

function toCardData(card: CardDto): CardData {
  return {
    number: card.number,
    holderName: card.holder_name,
    expMonth: card.exp_month,
    expYear: card.exp_year,
    cvv: card.cvv,
  };
}

interface CheckedPayment {
  amount: Cents;
  installments: number;
  entryMode: EntryMode;
  brand: string | null;
  card?: CardData;
  /** A card on file charged instead of `card`. */
  cardToken?: string;
  /** See ChargeOptions.payableUntil. */
  payableUntil?: Date;
}

function filtersOf(query: TransactionListQueryDto): TransactionFilters {
  const money = (value: string | undefined) => {
    if (value === undefined) return undefined;
    const checked = checkMoney(value, { allowZero: true });
    return checked.ok ? checked.value : undefined;
  };
  return {
    status: query.status,
    paymentType: query.payment_type,
    cardBrand: query.card_brand,
    entryMode: query.entry_mode,
    source: query.source,
    reference: query.reference,
    createdAfter: query.created_after ? instantOf(query.created_after) : undefined,
    createdBefore: query.created_before ? instantOf(query.created_before) : undefined,
    amountMin: money(query.amount_min),
    amountMax: money(query.amount_max),
  };
}

function transactionNotFound(): NotFoundError {
  return new NotFoundError('Transaction not found.', 'transaction_not_found');
}
