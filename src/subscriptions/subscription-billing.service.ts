import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EntityManager } from 'typeorm';
import { ConflictError } from '../common/errors/api-error';
import { formatMoney } from '../common/money/money';
import { MailService } from '../mail/mail.service';
import type { TransactionResponseDto } from '../transactions/dto/transaction.dto';
import { TransactionSettlementListener, TransactionSettlements } from '../transactions/transaction-settlements';
import { TransactionsService } from '../transactions/transactions.service';
import { recordEvents } from '../webhooks/outbox';
import type { BillingCycle } from './billing-period';
import { SubscriptionResponseDto } from './dto/subscription.dto';
import type {
  NewSubscription,
  Subscription,
  SubscriptionCharge,
  SubscriptionPlan,
} from './entities/subscription.types';
import { awaitingPixPayment, failed, paid, Transition } from './subscription-state';
import { SubscriptionsRepository } from './subscriptions.repository';

/** A subscription waiting for its first charge: it is written only if that charge is approved or awaits pix. */
export interface Signup {
  subscription: NewSubscription;
  /** Id of the first charge: the transaction's `reference`, as for every subscription charge. */
  chargeId: string;
  plan: SubscriptionPlan;
  sellerName: string;
  manageToken: string;
  asOf: Date;
  /** Set by the settlement listener once the subscription is written. */
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
  ) {}

  onModuleInit(): void {
    this.settlements.subscribe(this);
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
    if (!charge || (charge.transactionId !== null && charge.transactionId !== tx.id)) return;
    // "interrupted": given up by the recovery of a dead worker; a late outcome still settles it, and
    // the unique keys refuse it (rolling the settlement back, so the reconciler voids it) if the
    // period was charged again meanwhile.
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
          await this.apply(manager, subscription, awaitingPixPayment(charge));
          await this.mailPixCharge(manager, subscription, plan, charge, tx);
        }
        return;
      case 'declined':
        await this.repo.updateCharge(manager, charge.id, { status: 'declined', transactionId: tx.id });
        if (live) await this.apply(manager, subscription, failed(subscription, charge));
        return;
      case 'voided':
        if (inFlight) {
          // An interrupted charge, voided before it was settled: no money moved, the attempt is free again.
          await this.repo.updateCharge(manager, charge.id, { status: 'interrupted', transactionId: tx.id });
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
    const charge = {
      id: signup.chargeId,
      subscriptionId: base.id,
      period: 0,
      attempt: 0,
      amount: signup.plan.amount,
      periodStart: base.currentPeriodStart,
      periodEnd: base.currentPeriodEnd,
      dueAt: base.anchorAt,
      asOf: signup.asOf,
      lease: null,
      transactionId: tx.id,
    };
    const transition: Transition = pendingPix ? awaitingPixPayment(charge) : paid(base, cycleOf(signup.plan), 0);
    const created = await this.repo.insertSubscription(manager, {
      ...base,
      ...transition.changes,
      status: pendingPix ? 'incomplete' : 'active',
    } as NewSubscription);
    await this.repo.claimCharge(manager, { ...charge, status: pendingPix ? 'pending' : 'approved' });
    const view = SubscriptionResponseDto.of(created);
    await recordEvents(
      manager,
      ['subscription.created' as const, ...transition.events].map((type) => ({
        type,
        sellerId: created.sellerId,
        data: view,
      })),
    );
    await this.mailWelcome(manager, created, signup, pendingPix ? tx : null);
    signup.created = created;
  }

  /**
   * Withdraws a pix charge that can no longer be paid (its subscription was canceled). Done
   * after the cancellation committed; a failure is logged (a later payment of it is kept as history).
   */
  async withdrawCharge(sellerId: string, transactionId: string): Promise<void> {
    try {
      await this.transactions.void(sellerId, transactionId, 'subscription_canceled');
    } catch (error) {
      if (!(error instanceof ConflictError)) {
        this.logger.error({ err: error, transaction: transactionId }, 'Could not withdraw the charge');
      }
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
        `Pay R$ ${tx.amount} with this PIX code by ${awaitingPixPayment(charge).changes.nextChargeAt!.toISOString()}:`,
        tx.pix!.qr_code,
        '',
        `Subscription: ${subscription.id}`,
      ].join('\n'),
    });
  }
}

function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

export function cycleOf(plan: Pick<SubscriptionPlan, 'interval' | 'intervalCount'>): BillingCycle {
  return { interval: plan.interval, intervalCount: plan.intervalCount };
}
