import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { formatMoney } from '../common/money/money';
import { JobQueue } from '../jobs/job-queue.service';
import { TransactionsService } from '../transactions/transactions.service';
import type {
  Subscription,
  SubscriptionCharge,
  SubscriptionPlan,
  SubscriptionStatus,
} from './entities/subscription.types';
import { cycleOf, SubscriptionBilling, Withdrawal } from './subscription-billing.service';
import { pixPayableUntil, renewalAction } from './subscription-state';
import { RenewalLease, SubscriptionsRepository } from './subscriptions.repository';

export const RENEWAL_JOB = 'subscriptions.renew';

export interface RenewalOptions {
  /** Subscriptions locked and claimed per database transaction. */
  batchSize?: number;
  /** Charges of a batch sent to the processor at once. */
  concurrency?: number;
}

export interface RenewalSummary {
  charged: number;
  declined: number;
  awaitingPix: number;
  /** Card charges whose outcome the processor has not told (a timeout): the reconciler settles them. */
  outcomeUnknown: number;
  /** Subscriptions this run moved to past_due: by a declined card charge, or an unpaid pix charge. */
  pastDue: number;
  /** Subscriptions this run canceled: retries spent (the last one declined or unpaid), or cancellation at period end. */
  canceled: number;
  /**
   * Charges the platform refused before charging (the seller cannot take payments: no or inactive
   * rate plan…): failed attempts, as declines are.
   */
  refused: number;
  /** Charges whose worker died mid-charge, resolved (voided or released) before this run. */
  recovered: number;
  errors: number;
}

interface Claimed {
  subscription: Subscription;
  plan: SubscriptionPlan;
  charge: SubscriptionCharge;
}

/**
 * The renewal job: charges every subscription whose `next_charge_at` has come, as of `now` (a
 * parameter: the scheduler passes the clock, tests and `subscriptions:renew --now` a chosen time).
 *
 * Any number of runs may go at once. Each batch locks due subscriptions with FOR UPDATE SKIP
 * LOCKED and, in that transaction, claims each charge attempt in `subscription_charges` (unique
 * per subscription, period and attempt) before the processor is called; the charge's
 * settlement then moves the subscription on in the transaction that records the outcome. A run
 * holds a lease (a session advisory lock) for its lifetime; a claim whose lease is free belongs to
 * a dead run and is resolved by the next one: its unsettled transaction voided, the attempt freed.
 */
@Injectable()
export class SubscriptionRenewals implements OnModuleInit {
  private readonly logger = new Logger('Renewals');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repo: SubscriptionsRepository,
    private readonly billing: SubscriptionBilling,
    private readonly transactions: TransactionsService,
    private readonly jobs: JobQueue,
  ) {}

  onModuleInit(): void {
    this.jobs.define({
      name: RENEWAL_JOB,
      schedule: '*/5 * * * *',
      handler: async () => {
        const summary = await this.run(new Date());
        this.logger.log({ summary }, 'Subscription renewals ran');
      },
    });
  }

  async run(now: Date, options: RenewalOptions = {}): Promise<RenewalSummary> {
    const batchSize = options.batchSize ?? 100;
    const concurrency = options.concurrency ?? 4;
    const summary: RenewalSummary = {
      charged: 0,
      declined: 0,
      refused: 0,
      awaitingPix: 0,
      outcomeUnknown: 0,
      pastDue: 0,
      canceled: 0,
      recovered: 0,
      errors: 0,
    };
    const lease = await this.repo.holdLease(randomBytes(8).readBigInt64BE().toString());
    try {
      summary.recovered = await this.recoverAbandoned();
      for (;;) {
        if (!(await lease.held())) {
          // Its claims look abandoned to other runs now, which recover them: this run claims and charges no more.
          summary.errors++;
          this.logger.error({ lease: lease.key }, 'The renewal run lost its lease; it stops');
          break;
        }
        const { claimed, changed } = await this.claimBatch(now, lease.key, batchSize, summary);
        if (claimed.length === 0 && changed === 0) break;
        await eachWithConcurrency(claimed, concurrency, (c) => this.charge(c, lease, summary));
      }
    } finally {
      await lease.release();
    }
    return summary;
  }

  /**
   * One batch: due subscriptions locked; cancellations and pix due dates applied; charge
   * attempts claimed. Committed before any processor call.
   */
  private async claimBatch(now: Date, lease: string, limit: number, summary: RenewalSummary) {
    const withdraw: Withdrawal[] = [];
    const result = await this.dataSource.transaction(async (manager) => {
      const claimed: Claimed[] = [];
      let changed = 0;
      for (const { subscription, plan } of await this.repo.lockDue(manager, now, limit)) {
        // Only pix charges wait for payment.
        const open = subscription.paymentType === 'pix' ? await this.repo.openCharge(manager, subscription.id) : null;
        const action = renewalAction(subscription, cycleOf(plan), open, now);
        if (action.kind === 'charge') {
          const charge = await this.repo.claimCharge(manager, {
            subscriptionId: subscription.id,
            period: action.period,
            attempt: action.attempt,
            status: 'processing',
            amount: plan.amount,
            periodStart: action.periodStart,
            periodEnd: action.periodEnd,
            dueAt: action.dueAt,
            asOf: now,
            lease,
            transactionId: null,
          });
          if (charge) claimed.push({ subscription, plan, charge });
          else this.logger.warn({ subscription: subscription.id, period: action.period }, 'Charge already claimed');
          continue;
        }
        await this.billing.apply(manager, subscription, action.transition);
        changed++;
        if (action.kind === 'past_due') summary.pastDue++;
        else summary.canceled++;
        if (action.kind === 'cancel' && action.voidOpenCharge && open?.transactionId) {
          const charge = { sellerId: subscription.sellerId, transactionId: open.transactionId };
          await this.billing.queueWithdrawal(manager, charge);
          withdraw.push(charge);
        }
      }
      return { claimed, changed };
    });
    for (const charge of withdraw) await this.billing.withdrawNow(charge);
    return result;
  }

  /** Charges a claimed attempt through the transactions service; its settlement updates the subscription. */
  private async charge(
    { subscription, plan, charge }: Claimed,
    lease: RenewalLease,
    summary: RenewalSummary,
  ): Promise<void> {
    // A claim of a run that lost its lease may be recovered and charged by another run: left alone.
    if (!(await lease.held())) return;
    try {
      const tx = await this.transactions.create(
        subscription.sellerId,
        {
          amount: formatMoney(charge.amount),
          payment_type: subscription.paymentType,
          description: `Subscription ${subscription.id}: ${plan.name}, period ${charge.period + 1}`,
          reference: charge.id,
          customer: { name: subscription.name, email: subscription.email, document: subscription.document },
        },
        'subscription',
        { cardOnFile: subscription.card ?? undefined, payableUntil: pixPayableUntil(charge, false) },
      );
      if (tx.status === 'approved') summary.charged++;
      else if (tx.status === 'declined') {
        summary.declined++;
        // The decline's settlement moved the subscription (past due, or canceled once its retries are spent).
        countMove(summary, subscription.status, (await this.repo.findSubscription(subscription.id))?.status);
      } else if (tx.status === 'pending' && tx.pix) summary.awaitingPix++;
      else if (tx.status === 'pending') summary.outcomeUnknown++;
    } catch (error) {
      if (error instanceof ApiError && error.status < 500 && !(await this.anyTransactionOf(subscription, charge))) {
        // Refused by the platform before any transaction was written or the processor called.
        return this.refused(subscription, charge, error, summary);
      }
      // The claim stays in flight: the next run resolves it once this run's lease is released.
      summary.errors++;
      this.logger.error({ err: error, subscription: subscription.id, charge: charge.id }, 'Renewal charge failed');
    }
  }

  /** Whether a transaction of this charge attempt was written (its `reference` is the charge's id). */
  private async anyTransactionOf(subscription: Subscription, charge: SubscriptionCharge): Promise<boolean> {
    const written = await this.transactions.list(
      subscription.sellerId,
      { reference: charge.id, source: 'subscription' },
      { limit: 1, descending: true, after: null },
    );
    return written.results.length > 0;
  }

  /** A charge the platform refused (see SubscriptionBilling.chargeRefused): a failed attempt, not a stuck claim. */
  private async refused(
    subscription: Subscription,
    charge: SubscriptionCharge,
    refusal: ApiError,
    summary: RenewalSummary,
  ): Promise<void> {
    const after = await this.dataSource.transaction((manager) => this.billing.chargeRefused(manager, charge.id));
    summary.refused++;
    countMove(summary, subscription.status, after?.status);
    this.logger.warn(
      { subscription: subscription.id, charge: charge.id, code: refusal.code, reason: refusal.message },
      'Renewal charge refused by the platform: counted as a failed attempt',
    );
  }

  /**
   * Claims of dead runs. With no transaction, the processor was never called: the attempt is
   * freed. With an unsettled one, the processor is asked what became of it: a charge it made is
   * settled (and moves the subscription on through the settlement listener), one it never received
   * is voided, freeing the attempt. A freed attempt's subscription is still due and charged again.
   */
  private async recoverAbandoned(): Promise<number> {
    const unsettled: string[] = [];
    const found = await this.dataSource.transaction(async (manager) => {
      const abandoned = await this.repo.lockAbandonedClaims(manager, 1000);
      for (const claim of abandoned) {
        const pending = await this.transactions.list(
          claim.sellerId,
          { reference: claim.id, source: 'subscription', status: 'pending' },
          { limit: 10, descending: true, after: null },
        );
        if (pending.results.length === 0) await this.repo.updateCharge(manager, claim.id, { status: 'interrupted' });
        else unsettled.push(...pending.results.map((t) => t.id));
      }
      return abandoned.length;
    });
    for (const id of unsettled) await this.transactions.reconcile(id);
    return found;
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachWithConcurrency<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

/** Counts a subscription a failed attempt moved: to past due, or canceled once its retries are spent. */
function countMove(summary: RenewalSummary, before: SubscriptionStatus, after: SubscriptionStatus | undefined): void {
  if (after === before) return;
  if (after === 'past_due') summary.pastDue++;
  if (after === 'canceled') summary.canceled++;
}
