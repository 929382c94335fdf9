import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AuthorizationService } from '../auth/authorization.service';
import type { Principal } from '../auth/principal';
import {
  ApiError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  SecretNotReplayableError,
  UnauthorizedError,
  ValidationError,
} from '../common/errors/api-error';
import { heldIdempotencyKey, requestTransaction } from '../common/idempotency/request-transaction';
import { checkMoney, formatMoney } from '../common/money/money';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { normaliseDocument } from '../sellers/document';
import { SellersService } from '../sellers/sellers.service';
import type { CreateTransactionDto } from '../transactions/dto/transaction.dto';
import { TransactionsService } from '../transactions/transactions.service';
import { recordEvent } from '../webhooks/outbox';
import { daysAfter, period } from './billing-period';
import {
  CreateSubscriptionPlanDto,
  PlanListQueryDto,
  PublicPlanResponseDto,
  SubscriptionPlanResponseDto,
  UpdateSubscriptionPlanDto,
} from './dto/subscription-plan.dto';
import {
  PublicSubscriberResponseDto,
  SubscribeDto,
  SubscribeResponseDto,
  SubscriberListQueryDto,
  SubscriptionResponseDto,
} from './dto/subscription.dto';
import type { NewSubscription, Subscription, SubscriptionPlan } from './entities/subscription.types';
import { INVALID_MANAGE_TOKEN, manageTokenMatches, newManageToken } from './manage-token';
import { cycleOf, Signup, SubscriptionBilling } from './subscription-billing.service';
import { canceled, pixPayableUntil } from './subscription-state';
import { SubscriptionsRepository } from './subscriptions.repository';
import { SYSTEM_VOID_REASONS } from '../transactions/void-reasons';

/** Who cancels: the seller's user (JWT), or the subscriber with the manage token. */
export type Canceler = { kind: 'seller'; principal: Principal } | { kind: 'subscriber'; token: string };

/**
 * Subscription plans (seller side) and subscriptions (public side): subscribe with the first
 * charge through the transactions service, the public views, and cancellation.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repo: SubscriptionsRepository,
    private readonly billing: SubscriptionBilling,
    private readonly transactions: TransactionsService,
    private readonly sellers: SellersService,
    private readonly authorization: AuthorizationService,
  ) {}

  // ---- plans (seller side)

  async createPlan(principal: Principal, input: CreateSubscriptionPlanDto): Promise<SubscriptionPlanResponseDto> {
    // A seller named in the body that the caller cannot see is "Seller not found." (400), as for events.
    await this.authorization.authorizeSeller(principal, input.seller, {
      permission: 'subscriptions.manage',
      unknownSellerIsBadRequest: true,
    });
    const amount = checkMoney(input.amount);
    if (!amount.ok) throw ValidationError.of('amount', amount.message);
    return requestTransaction(this.dataSource, async (manager) => {
      const plan = await this.repo.insertPlan(manager, {
        sellerId: input.seller,
        name: input.name.trim(),
        description: input.description ?? null,
        amount: amount.value,
        interval: input.interval,
        intervalCount: input.interval_count ?? 1,
        trialDays: input.trial_days ?? 0,
        paymentTypes: input.payment_types,
        active: input.active ?? true,
      });
      return SubscriptionPlanResponseDto.of(plan);
    });
  }

  async listPlans(principal: Principal, query: PlanListQueryDto, page: PageRequest) {
    const superuser = principal.kind === 'user' && principal.isSuperuser;
    if (!query.seller && !superuser) throw ValidationError.of('seller', 'is required');
    if (query.seller) {
      await this.authorization.authorizeSeller(principal, query.seller, { permission: 'subscriptions.manage' });
    }
    const rows = await this.repo.listPlans(query.seller ?? null, page);
    return toPage(
      rows,
      page,
      (p) => p.seq,
      (p) => SubscriptionPlanResponseDto.of(p),
    );
  }

  async updatePlan(
    principal: Principal,
    id: string,
    input: UpdateSubscriptionPlanDto,
  ): Promise<SubscriptionPlanResponseDto> {
    const plan = await this.managedPlan(principal, id);
    const updated = await this.dataSource.transaction((manager) =>
      this.repo.updatePlanTexts(manager, plan.sellerId, plan.id, {
        name: input.name?.trim(),
        description: input.description,
        active: input.active,
      }),
    );
    return SubscriptionPlanResponseDto.of(updated);
  }

  async listSubscribers(
    principal: Principal,
    planId: string,
    query: SubscriberListQueryDto,
    page: PageRequest,
  ): Promise<Page<SubscriptionResponseDto>> {
    const plan = await this.managedPlan(principal, planId);
    const rows = await this.repo.listSubscribers(plan.id, query.status, page);
    return toPage(
      rows,
      page,
      (s) => s.seq,
      (s) => SubscriptionResponseDto.of(s),
    );
  }

  // ---- public side

  async publicPlan(id: string): Promise<PublicPlanResponseDto> {
    const plan = await this.repo.findPlan(id);
    if (!plan?.active) throw planNotFound();
    return PublicPlanResponseDto.of(plan, (await this.sellers.find(plan.sellerId)).name);
  }

  async publicSubscriber(id: string): Promise<PublicSubscriberResponseDto> {
    const subscription = await this.repo.findSubscription(id);
    if (!subscription) throw subscriptionNotFound();
    return this.publicView(subscription);
  }

  /**
   * Subscribes to an active plan. With a trial nothing is charged now. Otherwise the first
   * charge goes through the transactions service and its settlement writes the subscription:
   * approved → active, pix → incomplete until paid; declined → 402 and nothing is written.
   */
  async subscribe(planId: string, input: SubscribeDto): Promise<SubscribeResponseDto> {
    const plan = await this.repo.findPlan(planId);
    if (!plan?.active) throw planNotFound();
    const { document } = this.checkSubscribe(plan, input);
    const seller = await this.sellers.find(plan.sellerId);
    const card = input.payment.card ? await this.transactions.tokenizeCard(input.payment.card) : null;
    const manage = newManageToken();
    const now = new Date();
    const anchor = plan.trialDays > 0 ? daysAfter(now, plan.trialDays) : now;
    const first = period(anchor, cycleOf(plan), 0);
    const subscription: NewSubscription = {
      id: randomUUID(),
      planId: plan.id,
      sellerId: plan.sellerId,
      status: plan.trialDays > 0 ? 'trialing' : 'incomplete',
      name: input.subscriber.name.trim(),
      email: input.subscriber.email,
      document,
      paymentType: input.payment.type,
      card,
      anchorAt: anchor,
      trialEnd: plan.trialDays > 0 ? anchor : null,
      nextPeriod: 0,
      failedAttempts: 0,
      currentPeriodStart: plan.trialDays > 0 ? now : first.start,
      currentPeriodEnd: plan.trialDays > 0 ? anchor : first.end,
      nextChargeAt: anchor,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      manageTokenHash: manage.hash,
    };
    const key = heldIdempotencyKey();
    const signup: Signup = {
      subscription,
      // A retry of a signup interrupted after its key was tied resumes that signup's charge.
      chargeId: key?.resumeOf ?? randomUUID(),
      plan,
      sellerName: seller.name,
      manageToken: manage.token,
      asOf: now,
      key,
    };
    const firstCharge: CreateTransactionDto = {
      amount: formatMoney(plan.amount),
      payment_type: input.payment.type,
      // The plan, not the subscription: a declined first charge leaves no subscription to name.
      description: `Subscription to plan ${plan.id}: ${plan.name}, period 1`,
      reference: signup.chargeId,
      customer: { name: subscription.name, email: subscription.email, document },
    };
    if (plan.trialDays > 0) {
      // Nothing is charged during the trial, but the charge that ends it must be one the seller can take.
      await this.transactions.checkChargeable(plan.sellerId, firstCharge, card ?? undefined);
      return requestTransaction(this.dataSource, async (manager) => {
        const row = await this.repo.insertSubscription(manager, subscription);
        await recordEvent(manager, 'subscription.created', row.sellerId, SubscriptionResponseDto.of(row));
        await this.billing.mailWelcome(manager, row, signup, null);
        return SubscribeResponseDto.of(row, null, manage.token);
      });
    }

    // The key is tied to the first charge before the processor is called: a retry after a crash
    // resumes that charge (see TransactionsService.resume) and never charges the card twice.
    if (key && !key.resumeOf) await this.dataSource.transaction((manager) => key.tie(manager, signup.chargeId));
    const earlier = key?.resumeOf ? await this.chargeOf(plan.sellerId, key.resumeOf) : null;
    let tx = await this.billing.chargeSignup(signup, () =>
      this.transactions.create(plan.sellerId, firstCharge, 'subscription', {
        cardOnFile: card ?? undefined,
        resumeOf: earlier?.id ?? null,
        payableUntil: pixPayableUntil({ dueAt: subscription.anchorAt }, true),
      }),
    );
    if (!signup.created && tx.status === 'pending' && !tx.pix) {
      // The outcome is unknown (the processor may have charged): never "nothing was created".
      await this.dataSource.transaction((manager) => this.billing.signupAwaitingCharge(manager, signup, tx.id));
      if (!signup.created) tx = await this.transactions.get(plan.sellerId, tx.id); // settled meanwhile
    }
    if (signup.created) {
      if (key) key.answered = true; // answered in the transaction that wrote the subscription
      return SubscribeResponseDto.of(signup.created, tx, manage.token);
    }
    if (tx.status === 'declined') {
      throw new ApiError(
        402,
        'card_declined',
        `The card was declined (${tx.decline_reason ?? 'declined'}); no subscription was created.`,
      );
    }
    const written = await this.repo.findCharge(signup.chargeId);
    // A resumed signup written by its earlier attempt: its manage token is never shown again.
    if (written) throw new SecretNotReplayableError(written.subscriptionId);
    throw new ApiError(
      402,
      'charge_not_completed',
      `The first charge did not go through (${tx.status}); no subscription was created and nothing was charged.`,
    );
  }

  /** The transaction of a signup's first charge (its reference), if the earlier attempt wrote it. */
  private async chargeOf(sellerId: string, chargeId: string) {
    const found = await this.transactions.list(
      sellerId,
      { reference: chargeId, source: 'subscription' },
      { limit: 1, descending: false, after: null },
    );
    return found.results[0] ?? null;
  }

  /**
   * Cancels now, or at the end of the paid period (the default; a subscriber may only do that).
   * A subscription without a paid period left (past_due, incomplete, or active with its period
   * over and its renewal not yet paid) is canceled now.
   */
  async cancel(
    id: string,
    canceler: Canceler,
    atPeriodEnd = true,
  ): Promise<SubscriptionResponseDto | PublicSubscriberResponseDto> {
    const found = await this.repo.findSubscription(id);
    if (!found) throw subscriptionNotFound();
    if (canceler.kind === 'seller') {
      await this.authorization.authorizeSeller(canceler.principal, found.sellerId, {
        permission: 'subscriptions.manage',
        hiddenAs: subscriptionNotFound(),
      });
    }
    const now = new Date();
    const subscription = await this.dataSource.transaction(async (manager) => {
      // An unpaid pix charge is withdrawn (voided) in the same database transaction as the
      // cancellation, so that no payment is accepted once the subscription is canceled. Its
      // transaction is locked first, as a payment's settlement locks it before the subscription:
      // the two wait for each other in turn, never both at once.
      const pix = (await this.repo.openCharge(manager, id))?.transactionId;
      const charge = pix ? await this.transactions.lockForVoid(manager, found.sellerId, pix) : null;
      const locked = await this.repo.lockSubscription(manager, id);
      if (!locked) throw subscriptionNotFound();
      if (canceler.kind === 'subscriber') {
        // The token first: a request without the right one learns nothing of what it may do.
        if (!manageTokenMatches(canceler.token, locked.manageTokenHash)) {
          throw new UnauthorizedError(INVALID_MANAGE_TOKEN.code, INVALID_MANAGE_TOKEN.message);
        }
        if (!atPeriodEnd) {
          throw new ForbiddenError(
            'subscriber_cancels_at_period_end',
            'A subscriber cancels at the end of the paid period; only the seller can cancel now.',
          );
        }
      }
      const current = locked.subscription;
      if (current.status === 'canceled' || (atPeriodEnd && current.cancelAtPeriodEnd)) {
        throw new ConflictError(
          'subscription_already_canceled',
          current.status === 'canceled'
            ? 'The subscription is already canceled.'
            : 'The subscription is already set to cancel at the end of its period.',
        );
      }
      if (await this.repo.hasChargeInFlight(manager, id)) throw chargeInProgress();
      // A paid period (or trial) still running ends at its end; one already over (a renewal due,
      // or its pix waiting to be paid) leaves nothing to wait for: canceled now, the pix withdrawn.
      const paidPeriodLeft =
        (current.status === 'active' || current.status === 'trialing') && current.currentPeriodEnd > now;
      if (atPeriodEnd && paidPeriodLeft) {
        return this.billing.apply(manager, current, {
          changes: { cancelAtPeriodEnd: true, nextChargeAt: current.currentPeriodEnd },
          events: [],
        });
      }
      const open = await this.repo.openCharge(manager, id);
      // A pix charge issued since it was read (by a renewal, a moment ago) was not locked in order.
      if (open?.transactionId && open.transactionId !== charge?.id) throw chargeInProgress();
      const ended = await this.billing.apply(manager, current, canceled(now));
      // Paid meanwhile, the charge is no longer open and is kept; the processor hears of the void by its job.
      if (open && charge) await this.transactions.voidLocked(manager, charge, SYSTEM_VOID_REASONS.subscriptionCanceled);
      return ended;
    });
    return canceler.kind === 'seller' ? SubscriptionResponseDto.of(subscription) : this.publicView(subscription);
  }

  private async publicView(subscription: Subscription): Promise<PublicSubscriberResponseDto> {
    const plan = (await this.repo.findPlan(subscription.planId))!;
    const seller = await this.sellers.find(plan.sellerId);
    const charges = await this.repo.chargesOf(subscription.id);
    // Only a pix charge waits for payment: its code, for a page whose subscribe answer was lost.
    const open = charges.find((c) => c.status === 'pending' && c.transactionId !== null);
    const pix = open ? (await this.transactions.get(subscription.sellerId, open.transactionId!)).pix : null;
    return PublicSubscriberResponseDto.of(subscription, PublicPlanResponseDto.of(plan, seller.name), charges, pix);
  }

  /** The plan, if the principal manages subscriptions of its seller; otherwise it does not exist for them. */
  private async managedPlan(principal: Principal, id: string): Promise<SubscriptionPlan> {
    const plan = await this.repo.findPlan(id);
    if (!plan) throw planNotFound();
    await this.authorization.authorizeSeller(principal, plan.sellerId, {
      permission: 'subscriptions.manage',
      hiddenAs: planNotFound(),
    });
    return plan;
  }

  private checkSubscribe(plan: SubscriptionPlan, input: SubscribeDto): { document: string } {
    if (!plan.paymentTypes.includes(input.payment.type)) {
      throw new BadRequestError(
        'payment_type_not_offered',
        `This plan takes ${plan.paymentTypes.join(' or ')}, not ${input.payment.type}.`,
      );
    }
    // SubscribeDto's rules have passed: the document is a CPF or CNPJ, the card is there for credit.
    return { document: normaliseDocument(input.subscriber.document)!.digits };
  }
}

function planNotFound(): NotFoundError {
  return new NotFoundError('Subscription plan not found.', 'subscription_plan_not_found');
}

function chargeInProgress(): ConflictError {
  return new ConflictError(
    'subscription_charge_in_progress',
    'A charge of this subscription is being processed; try again in a few seconds.',
  );
}

function subscriptionNotFound(): NotFoundError {
  return new NotFoundError('Subscription not found.', 'subscription_not_found');
}
