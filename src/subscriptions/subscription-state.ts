import {
  BillingCycle,
  daysAfter,
  nextRetryAt,
  period,
  PIX_CANCEL_AFTER_DAYS,
  PIX_PAYMENT_DAYS,
} from './billing-period';
import type { Subscription, SubscriptionChanges, SubscriptionCharge } from './entities/subscription.types';

/**
 * The subscription state machine as plain functions: what a charge's outcome, or the renewal
 * job finding a subscription due, does to it. No I/O; the services apply the answers.
 *
 *   trialing ──charge ok──▶ active ──renewal ok──▶ active (period advanced)
 *   trialing ──pix charge sent──▶ active (its payment awaited, as a renewal's)
 *   incomplete (pix unpaid) ──paid──▶ active;  unpaid by its due date ──▶ canceled
 *   active/trialing ──renewal fails──▶ past_due ──retry ok──▶ active
 *   past_due ──retries at +1, +3, +5 days fail──▶ canceled
 *   cancel at period end ──period ends──▶ canceled
 */
export type SubscriptionEvent = 'subscription.charged' | 'subscription.past_due' | 'subscription.canceled';

export interface Transition {
  changes: SubscriptionChanges;
  events: SubscriptionEvent[];
}

/** Period `charged` is paid: active, that period current, the next charge at its end. */
export function paid(s: Pick<Subscription, 'anchorAt'>, cycle: BillingCycle, charged: number): Transition {
  const current = period(s.anchorAt, cycle, charged);
  return {
    changes: {
      status: 'active',
      nextPeriod: charged + 1,
      failedAttempts: 0,
      currentPeriodStart: current.start,
      currentPeriodEnd: current.end,
      nextChargeAt: current.end,
    },
    events: ['subscription.charged'],
  };
}

/**
 * A pix charge awaits payment: the job looks again at its due date. A trial it ends is over:
 * active meanwhile, as a subscription whose renewal pix awaits payment (past due when unpaid then).
 */
export function awaitingPixPayment(
  s: Pick<Subscription, 'status'>,
  charge: Pick<SubscriptionCharge, 'dueAt'>,
): Transition {
  const nextChargeAt = daysAfter(charge.dueAt, PIX_PAYMENT_DAYS);
  return { changes: s.status === 'trialing' ? { status: 'active', nextChargeAt } : { nextChargeAt }, events: [] };
}

/**
 * Until when a pix charge due at `dueAt` can be paid: until the renewal job gives up on it. A
 * signup's first charge is given up one day after it is due (the subscription is canceled then),
 * a renewal's once the retries of its dunning would be over (past due meanwhile).
 */
export function pixPayableUntil(charge: Pick<SubscriptionCharge, 'dueAt'>, signup: boolean): Date {
  return daysAfter(charge.dueAt, signup ? PIX_PAYMENT_DAYS : PIX_CANCEL_AFTER_DAYS);
}

export function canceled(asOf: Date): Transition {
  return { changes: { status: 'canceled', canceledAt: asOf, nextChargeAt: null }, events: ['subscription.canceled'] };
}

/**
 * A charge attempt failed (declined, or a pix charge withdrawn): past_due with the next retry,
 * or canceled once the retries are spent. A retry whose time has already gone by (the job ran
 * late) is tried a day after this failure instead, so a late run never burns every retry at once.
 */
export function failed(s: Subscription, charge: Pick<SubscriptionCharge, 'attempt' | 'dueAt' | 'asOf'>): Transition {
  const retry = s.status === 'incomplete' ? null : nextRetryAt(charge.dueAt, charge.attempt);
  if (!retry) {
    const end = canceled(charge.asOf);
    return { changes: { ...end.changes, failedAttempts: charge.attempt + 1 }, events: end.events };
  }
  return {
    changes: {
      status: 'past_due',
      failedAttempts: charge.attempt + 1,
      nextChargeAt: retry > charge.asOf ? retry : daysAfter(charge.asOf, 1),
    },
    events: s.status === 'past_due' ? [] : ['subscription.past_due'],
  };
}

/** What the renewal job does with a subscription whose `next_charge_at` has come. */
export type RenewalAction =
  | { kind: 'cancel'; transition: Transition; voidOpenCharge: boolean }
  | { kind: 'past_due'; transition: Transition }
  | { kind: 'charge'; period: number; attempt: number; dueAt: Date; periodStart: Date; periodEnd: Date };

export function renewalAction(
  s: Subscription,
  cycle: BillingCycle,
  openCharge: Pick<SubscriptionCharge, 'dueAt'> | null,
  asOf: Date,
): RenewalAction {
  if (s.cancelAtPeriodEnd && asOf >= s.currentPeriodEnd) {
    return { kind: 'cancel', transition: canceled(asOf), voidOpenCharge: openCharge !== null };
  }
  if (openCharge) {
    // A pix charge still unpaid at its due date.
    const cancelAt = pixPayableUntil(openCharge, false);
    if (s.status === 'incomplete' || asOf >= cancelAt) {
      return { kind: 'cancel', transition: canceled(asOf), voidOpenCharge: true };
    }
    return {
      kind: 'past_due',
      transition: {
        changes: { status: 'past_due', nextChargeAt: cancelAt },
        events: s.status === 'past_due' ? [] : ['subscription.past_due'],
      },
    };
  }
  const current = period(s.anchorAt, cycle, s.nextPeriod);
  return {
    kind: 'charge',
    period: s.nextPeriod,
    attempt: s.failedAttempts,
    // A pix charge is payable for its whole window from when it is sent: one a late run sends
    // (after an outage) is not past due, or withdrawn, the moment it goes out. A retry (the
    // first attempt was refused) keeps the period's due date: the retries count from it.
    dueAt: s.paymentType === 'pix' && s.failedAttempts === 0 && asOf > current.start ? asOf : current.start,
    periodStart: current.start,
    periodEnd: current.end,
  };
}
