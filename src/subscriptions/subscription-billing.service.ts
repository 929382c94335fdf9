import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EntityManager } from 'typeorm';
import { ConflictError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/database-errors';
import type { IdempotencyClaim } from '../common/idempotency/request-transaction';
import { formatMoney } from '../common/money/money';
import { isUuid } from '../common/validation/uuid';
import { JobQueue } from '../jobs/job-queue.service';
import { MailService } from '../mail/mail.service';
import type { TransactionResponseDto } from '../transactions/dto/transaction.dto';
import {
  SettlementRefused,
  TransactionSettlementListener,
  TransactionSettlements,
} from '../transactions/transaction-settlements';
import { TransactionsService } from '../transactions/transactions.service';
import { recordEvents } from '../webhooks/outbox';
import type { BillingCycle } from './billing-period';
import { SubscriptionResponseDto } from './dto/subscription.dto';
import type {
  ChargeStatus,
  NewSubscription,
  Subscription,
  SubscriptionCharge,
  SubscriptionPlan,
} from './entities/subscription.types';
import { awaitingPixPayment, canceled, failed, paid, SubscriptionEvent, Transition } from './subscription-state';
import { SubscriptionsRepository } from './subscriptions.repository';
import { SYSTEM_VOID_REASONS } from '../transactions/void-reasons';

/** The unique keys of subscription_charges that refuse a second live charge of one attempt or period. */
const CHARGED_AGAIN = ['subscription_charges_claim', 'subscription_charges_one_live'];
/** Withdraws the open pix charge of a canceled subscription (queued with the cancellation). */
const WITHDRAW_CHARGE_JOB = 'subscriptions.withdraw-charge';

/** A charge to withdraw: the transaction of a pix no longer payable. */
export interface Withdrawal {
  sellerId: string;
  transactionId: string;
}

/** A subscription waiting for its first charge: it is written only if that charge is approved or awaits pix. */
export interface Signup {
  subscription: NewSubscription;
  /** Id of the first charge: the transaction's `reference`, as for every subscription charge. */
  chargeId: string;
  plan: SubscriptionPlan;
  sellerName: string;
  manageToken: string;
  asOf: Date;
  /** The request's Idempotency-Key: answered in the transaction that writes the subscription. */
  key?: IdempotencyClaim;
  /** Set once the subscription is written (by the settlement listener, or as awaiting its charge). */
  created?: Subscription;
}

/**
 * Applies what charges do to subscriptions, inside the database transaction that settles the
 * charge (a TransactionSettlements listener): the transaction's status, the subscription's
 * state, its outbox events and e-mails commit together or not at all.
 */
@Injectable()
export class SubscriptionBilling implements OnModuleInit, TransactionSettlementListener {
  private readonly logger = new Logger('Subscriptions');
  private readonly signups = new AsyncLocalStorage<Signup>();

  constructor(
    private readonly repo: SubscriptionsRepository,
    private readonly settlements: TransactionSettlements,
    private readonly mail: MailService,
    private readonly transactions: TransactionsService,
    private readonly jobs: JobQueue,
  ) {}

  onModuleInit(): void {
    this.settlements.subscribe(this);
    this.jobs.define<Withdrawal>({
      name: WITHDRAW_CHARGE_JOB,
      handler: (charge) => this.withdraw(charge),
      queue: { retryLimit: 20, retryDelay: 30, retryBackoff: true },
    });
  }

  /** Runs the first charge of a signup; its settlement writes the subscription (see onTransactionSettled). */
  chargeSignup<T>(signup: Signup, charge: () => Promise<T>): Promise<T> {
    return this.signups.run(signup, charge);
  }

  async onTransactionSettled(manager: EntityManager, tx: TransactionResponseDto): Promise<void> {
    if (tx.source !== 'subscription' || !tx.reference) return;
    const signup = this.signups.getStore();
    if (signup && signup.chargeId === tx.reference && !signup.created) {
      await this.settleSignup(manager, signup, tx);
      return;
    }
    // A subscription charge's transaction carries the charge's id as its reference.
    const charge = isUuid(tx.reference) ? await this.repo.lockCharge(manager, tx.reference) : null;
    if (!charge || (charge.transactionId !== null && charge.transactionId !== tx.id)) {
      // Money taken for no charge of ours (a signup whose answer was lost, a second charge of one
      // attempt): refused, so that the transactions service voids it and the customer is refunded.
      if (tx.status === 'approved') throw new SettlementRefused(SYSTEM_VOID_REASONS.chargeNotRecorded);
      return;
    }
    try {
      await this.settleCharge(manager, charge, tx);
    } catch (error) {
      // "interrupted": given up by the recovery of a dead worker; a late outcome still settles it,
      // unless the attempt was charged again meanwhile: the unique keys refuse a second live charge
      // of the attempt or the period, and the late one is voided.
      if (CHARGED_AGAIN.some((key) => isUniqueViolation(error, key))) {
        throw new SettlementRefused(SYSTEM_VOID_REASONS.periodAlreadyCharged);
      }
      throw error;
    }
  }

  private async settleCharge(manager: EntityManager, charge: SubscriptionCharge, tx: TransactionResponseDto) {
    const inFlight = charge.status === 'processing' || charge.status === 'interrupted';
    const { subscription } = (await this.repo.lockSubscription(manager, charge.subscriptionId))!;
    const plan = (await this.repo.findPlan(subscription.planId, manager))!;
    const live = subscription.status !== 'canceled';
    switch (tx.status) {
      case 'approved':
        await this.repo.updateCharge(manager, charge.id, { status: 'approved', transactionId: tx.id });
        // A charge paid after the subscription was canceled is kept as history; nothing is renewed.
        if (live) await this.apply(manager, subscription, paid(subscription, cycleOf(plan), charge.period));
        return;
      case 'pending':
        if (!tx.pix || !inFlight) return;
        await this.repo.updateCharge(manager, charge.id, { status: 'pending', transactionId: tx.id });
        if (live) {
          await this.apply(manager, subscription, awaitingPixPayment(subscription, charge));
          await this.mailPixCharge(manager, subscription, plan, charge, tx);
        }
        return;
      case 'declined':
        await this.repo.updateCharge(manager, charge.id, { status: 'declined', transactionId: tx.id });
        if (live) await this.apply(manager, subscription, failed(subscription, charge));
        return;
      case 'voided':
        if (inFlight) {
          // An interrupted charge, voided before it was settled: no money moved, the attempt is free again;
          // but a signup whose first charge never went through ends there (no later run charges it).
          await this.repo.updateCharge(manager, charge.id, { status: 'interrupted', transactionId: tx.id });
          if (live && subscription.status === 'incomplete')
            await this.apply(manager, subscription, canceled(new Date()));
        } else if (charge.status === 'pending') {
          // A pix charge withdrawn before it was paid counts as a failed attempt.
          await this.repo.updateCharge(manager, charge.id, { status: 'voided' });
          if (live) await this.apply(manager, subscription, failed(subscription, charge));
        } else {
          await this.repo.updateCharge(manager, charge.id, { status: 'voided' });
        }
        return;
    }
  }

  /**
   * A renewal charge the platform refused before anything was written or charged (the seller
   * cannot take payments: no or inactive rate plan…): the claim is released as `interrupted` (no
   * money moved) and the attempt counts as failed, as a decline does: `past_due` with its retries,
   * then `canceled`. Answers the subscription as it then is; null when the claim was settled or
   * charged meanwhile (it is then left as it is).
   */
  async chargeRefused(manager: EntityManager, chargeId: string): Promise<Subscription | null> {
    const charge = await this.repo.lockCharge(manager, chargeId);
    if (charge?.status !== 'processing' || charge.transactionId !== null) return null;
    await this.repo.updateCharge(manager, charge.id, { status: 'interrupted' });
    const { subscription } = (await this.repo.lockSubscription(manager, charge.subscriptionId))!;
    if (subscription.status === 'canceled') return subscription;
    return this.apply(manager, subscription, failed(subscription, charge));
  }

  /** Writes a transition with its outbox events (data: the subscription as the API shows it). */
  async apply(manager: EntityManager, subscription: Subscription, transition: Transition): Promise<Subscription> {
    const updated = await this.repo.updateSubscription(manager, subscription.id, transition.changes);
    if (transition.events.length > 0) {
      const view = SubscriptionResponseDto.of(updated);
      await recordEvents(
        manager,
        transition.events.map((type) => ({ type, sellerId: updated.sellerId, data: view })),
      );
    }
    return updated;
  }

  /** The first charge of a signup settled: approved → active, pix pending → incomplete; else nothing is written. */
  private async settleSignup(manager: EntityManager, signup: Signup, tx: TransactionResponseDto): Promise<void> {
    const pendingPix = tx.status === 'pending' && tx.pix !== null;
    if (tx.status !== 'approved' && !pendingPix) return;
    const base = signup.subscription;
    const transition = pendingPix
      ? awaitingPixPayment(base, { dueAt: base.anchorAt })
      : paid(base, cycleOf(signup.plan), 0);
    await this.writeSignup(
      manager,
      signup,
      { ...base, ...transition.changes, status: pendingPix ? 'incomplete' : 'active' },
      { status: pendingPix ? 'pending' : 'approved', transactionId: tx.id },
      transition.events,
      pendingPix ? tx : null,
    );
  }

  /**
   * The first charge's outcome is unknown (the processor timed out, perhaps after charging): the
   * subscription is written `incomplete` with its charge `processing` and tied to the
   * transaction, so that the charge's settlement (the reconciler asks the processor) activates
   * it, or cancels it when declined or never made. Null when the transaction was settled meanwhile.
   */
  async signupAwaitingCharge(manager: EntityManager, signup: Signup, transactionId: string) {
    if (!(await this.transactions.holdPending(manager, transactionId))) return null;
    return this.writeSignup(manager, signup, signup.subscription, { status: 'processing', transactionId }, [], null);
  }

  /**
   * Writes a signup: the subscription, its first charge, `subscription.created` (then `events`),
   * the welcome e-mail and, for a request with an Idempotency-Key, the key's answer, all in the
   * caller's transaction. A first charge recorded already (a second charge of one signup) is refused.
   */
  private async writeSignup(
    manager: EntityManager,
    signup: Signup,
    subscription: NewSubscription,
    first: { status: ChargeStatus; transactionId: string },
    events: SubscriptionEvent[],
    pixCharge: TransactionResponseDto | null,
  ): Promise<Subscription> {
    const created = await this.repo.insertSubscription(manager, subscription);
    const charge = await this.repo.claimCharge(manager, {
      ...first,
      id: signup.chargeId,
      subscriptionId: created.id,
      period: 0,
      attempt: 0,
      amount: signup.plan.amount,
      periodStart: signup.subscription.currentPeriodStart,
      periodEnd: signup.subscription.currentPeriodEnd,
      dueAt: signup.subscription.anchorAt,
      asOf: signup.asOf,
      lease: null,
    });
    if (!charge) throw new SettlementRefused(SYSTEM_VOID_REASONS.chargeNotRecorded);
    const view = SubscriptionResponseDto.of(created);
    await recordEvents(
      manager,
      ['subscription.created' as const, ...events].map((type) => ({ type, sellerId: created.sellerId, data: view })),
    );
    await this.mailWelcome(manager, created, signup, pixCharge);
    await signup.key?.answer(manager, { id: created.id });
    signup.created = created;
    return created;
  }

  /**
   * A pix charge that can no longer be paid (a renewal run canceled its subscription, unpaid past
   * its retries) is to be withdrawn: queued in the cancellation's database transaction, so that
   * it is withdrawn even if the process dies after the commit (the job retries until the
   * processor takes it; paid meanwhile, the void refunds it). `withdrawNow` then does it at once.
   * (The run locks subscriptions before it knows their charges, so it cannot void in the
   * settlement's lock order as a cancellation by the seller or subscriber does.)
   */
  async queueWithdrawal(manager: EntityManager, charge: Withdrawal): Promise<void> {
    await this.jobs.send(WITHDRAW_CHARGE_JOB, charge, {}, manager);
  }

  /** The queued withdrawal, done at once after the cancellation committed; a failure is left to its job. */
  async withdrawNow(charge: Withdrawal): Promise<void> {
    try {
      await this.withdraw(charge);
    } catch (error) {
      this.logger.warn({ err: error, transaction: charge.transactionId }, 'Could not withdraw the charge yet; retried');
    }
  }

  private async withdraw({ sellerId, transactionId }: Withdrawal): Promise<void> {
    try {
      await this.transactions.void(sellerId, transactionId, SYSTEM_VOID_REASONS.subscriptionCanceled);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error; // voided or declined already
    }
  }

  /** The welcome e-mail: what was subscribed, the manage token and how to cancel, and the pix to pay. */
  async mailWelcome(
    manager: EntityManager,
    subscription: Subscription,
    signup: Pick<Signup, 'plan' | 'sellerName' | 'manageToken'>,
    pixCharge: TransactionResponseDto | null,
  ): Promise<void> {
    const lines = [
      `Hello ${subscription.name},`,
      '',
      `You subscribed to "${signup.plan.name}" from ${signup.sellerName}: R$ ${formatMoney(signup.plan.amount)} ` +
        `every ${signup.plan.intervalCount} ${signup.plan.interval}(s).`,
      subscription.trialEnd
        ? `Your free trial ends on ${subscription.trialEnd.toISOString()}; the first charge is made then.`
        : '',
      pixCharge?.pix ? `To start it, pay R$ ${pixCharge.amount} with this PIX code:\n${pixCharge.pix.qr_code}` : '',
      subscription.status === 'incomplete' && !pixCharge
        ? 'Your card payment is being confirmed; the subscription starts once it is (or ends if it is declined).'
        : '',
      '',
      `Subscription: ${subscription.id}`,
      `Your manage token (keep it secret): ${signup.manageToken}`,
      'To cancel at the end of the paid period, send:',
      `  POST /subscriptions/subscriber/${subscription.id}/cancel/ with the header "Authorization: Bearer <manage token>"`,
    ];
    await this.mail.queue(manager, {
      to: subscription.email,
      subject: `Your subscription to ${signup.plan.name}`,
      text: lines.filter((line, i, all) => line !== '' || all[i - 1] !== '').join('\n'),
    });
  }

  private async mailPixCharge(
    manager: EntityManager,
    subscription: Subscription,
    plan: SubscriptionPlan,
    charge: SubscriptionCharge,
    tx: TransactionResponseDto,
  ): Promise<void> {
    await this.mail.queue(manager, {
      to: subscription.email,
      subject: `Payment due: ${plan.name}`,
      text: [
        `Hello ${subscription.name},`,
        '',
        `Your subscription to "${plan.name}" renews for the period starting ${charge.periodStart.toISOString()}.`,
        `Pay R$ ${tx.amount} with this PIX code by ${awaitingPixPayment(subscription, charge).changes.nextChargeAt!.toISOString()}:`,
        tx.pix!.qr_code,
        '',
        `Subscription: ${subscription.id}`,
      ].join('\n'),
    });
  }
}

export function cycleOf(plan: Pick<SubscriptionPlan, 'interval' | 'intervalCount'>): BillingCycle {
  return { interval: plan.interval, intervalCount: plan.intervalCount };
}
