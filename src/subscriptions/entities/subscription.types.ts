import type { Cents } from '../../common/money/money';
import type { Interval } from '../billing-period';

/** Rows of the subscription tables, as the repository reads them (camelCase, money in cents). */
export type SubscriptionPaymentType = 'credit' | 'pix';
export type SubscriptionStatus = 'trialing' | 'active' | 'incomplete' | 'past_due' | 'canceled';
export type ChargeStatus = 'processing' | 'pending' | 'approved' | 'declined' | 'voided' | 'interrupted';

export interface SubscriptionPlan {
  id: string;
  seq: string;
  sellerId: string;
  name: string;
  description: string | null;
  amount: Cents;
  interval: Interval;
  intervalCount: number;
  trialDays: number;
  paymentTypes: SubscriptionPaymentType[];
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface StoredCard {
  token: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export interface Subscription {
  id: string;
  seq: string;
  planId: string;
  sellerId: string;
  status: SubscriptionStatus;
  name: string;
  email: string;
  document: string;
  paymentType: SubscriptionPaymentType;
  card: StoredCard | null;
  anchorAt: Date;
  trialEnd: Date | null;
  nextPeriod: number;
  failedAttempts: number;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  nextChargeAt: Date | null;
  cancelAtPeriodEnd: boolean;
  canceledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewSubscription = Omit<Subscription, 'seq' | 'createdAt' | 'updatedAt'> & { manageTokenHash: string };

export type SubscriptionChanges = Partial<
  Pick<
    Subscription,
    | 'status'
    | 'nextPeriod'
    | 'failedAttempts'
    | 'currentPeriodStart'
    | 'currentPeriodEnd'
    | 'nextChargeAt'
    | 'cancelAtPeriodEnd'
    | 'canceledAt'
  >
>;

export interface SubscriptionCharge {
  id: string;
  subscriptionId: string;
  period: number;
  attempt: number;
  status: ChargeStatus;
  amount: Cents;
  periodStart: Date;
  periodEnd: Date;
  dueAt: Date;
  /** The "now" of the renewal run (or the request) that made the charge. */
  asOf: Date;
  transactionId: string | null;
  createdAt: Date;
}

export type NewCharge = Omit<SubscriptionCharge, 'id' | 'createdAt'> & { id?: string; lease: string | null };
