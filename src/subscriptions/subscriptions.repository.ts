import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { centsFromDb } from '../common/money/money';
import { keysetSql, PageRequest } from '../common/pagination/pagination';
import { setWithUpdatedAt } from '../database/updated-at';
import type { Interval } from './billing-period';
import type {
  ChargeStatus,
  NewCharge,
  NewSubscription,
  Subscription,
  SubscriptionChanges,
  SubscriptionCharge,
  SubscriptionPaymentType,
  SubscriptionPlan,
  SubscriptionStatus,
} from './entities/subscription.types';

/** A renewal run's lease: a session advisory lock on a connection of its own. */
export interface RenewalLease {
  key: string;
  /** Whether the session still holds the lock: false once its connection failed (a dead run's claims are free). */
  held(): Promise<boolean>;
  release(): Promise<void>;
}

/** A due subscription with the terms of its plan, as the renewal job locks it. */
export interface DueSubscription {
  subscription: Subscription;
  plan: SubscriptionPlan;
}

const SUBSCRIPTION_COLUMNS = `s.id, s.seq::text AS seq, s.plan_id, s.seller_id, s.status, s.name, s.email, s.document,
  s.payment_type, s.card_token, s.card_brand, s.card_last4, s.card_exp_month, s.card_exp_year, s.anchor_at,
  s.trial_end, s.next_period, s.failed_attempts, s.current_period_start, s.current_period_end, s.next_charge_at,
  s.cancel_at_period_end, s.canceled_at, s.created_at, s.updated_at`;
const PLAN_COLUMNS = (p: string) =>
  [
    'id',
    'seller_id',
    'name',
    'description',
    'amount',
    'interval',
    'interval_count',
    'trial_days',
    'payment_types',
    'active',
    'created_at',
    'updated_at',
  ]
    .map((c) => `${p}.${c}`)
    .concat(`${p}.seq::text AS seq`)
    .join(', ');
const CHARGE_COLUMNS = `id, subscription_id, period, attempt, status, amount, period_start, period_end, due_at, as_of,
  transaction_id, created_at`;

const SUBSCRIPTION_FIELDS: Record<keyof SubscriptionChanges, string> = {
  status: 'status',
  nextPeriod: 'next_period',
  failedAttempts: 'failed_attempts',
  currentPeriodStart: 'current_period_start',
  currentPeriodEnd: 'current_period_end',
  nextChargeAt: 'next_charge_at',
  cancelAtPeriodEnd: 'cancel_at_period_end',
  canceledAt: 'canceled_at',
};

/**
 * SQL of subscription plans, subscriptions and their charges. Seller-owned reads name the
 * seller; the public routes read by the record's unguessable id only.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  // ---- plans

  async insertPlan(
    manager: EntityManager,
    plan: Omit<SubscriptionPlan, 'id' | 'seq' | 'createdAt' | 'updatedAt'>,
  ): Promise<SubscriptionPlan> {
    const [row] = await manager.query(
      `INSERT INTO subscription_plans AS p
         (seller_id, name, description, amount, interval, interval_count, trial_days, payment_types, active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${PLAN_COLUMNS('p')}`,
      [
        plan.sellerId,
        plan.name,
        plan.description,
        plan.amount,
        plan.interval,
        plan.intervalCount,
        plan.trialDays,
        plan.paymentTypes,
        plan.active,
      ],
    );
    return toPlan(row);
  }

  async findPlan(id: string, manager: EntityManager = this.dataSource.manager): Promise<SubscriptionPlan | null> {
    const [row] = await manager.query(`SELECT ${PLAN_COLUMNS('p')} FROM subscription_plans p WHERE p.id = $1`, [id]);
    return row ? toPlan(row) : null;
  }

  /** A page of plans, of one seller or (superusers) of all. */
  async listPlans(sellerId: string | null, page: PageRequest): Promise<SubscriptionPlan[]> {
    const params: unknown[] = [];
    const where: string[] = [];
    if (sellerId) where.push(`p.seller_id = $${params.push(sellerId)}`);
    const { condition, orderAndLimit } = keysetSql('p.seq', page, params);
    if (condition) where.push(condition);
    const rows = await this.dataSource.query(
      `SELECT ${PLAN_COLUMNS('p')} FROM subscription_plans p ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${orderAndLimit}`,
      params,
    );
    return rows.map(toPlan);
  }

  async updatePlanTexts(
    manager: EntityManager,
    sellerId: string,
    id: string,
    changes: { name?: string; description?: string | null; active?: boolean },
  ): Promise<SubscriptionPlan> {
    const [rows] = await manager.query(
      `UPDATE subscription_plans p SET ${setWithUpdatedAt([
        ['name', 'CASE WHEN $3::boolean THEN $4 ELSE name END'],
        ['description', 'CASE WHEN $5::boolean THEN $6 ELSE description END'],
        ['active', 'COALESCE($7, active)'],
      ])}
       WHERE p.seller_id = $1 AND p.id = $2 RETURNING ${PLAN_COLUMNS('p')}`,
      [
        sellerId,
        id,
        changes.name !== undefined,
        changes.name ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.active ?? null,
      ],
    );
    return toPlan(rows[0]);
  }

  // ---- subscriptions

  async insertSubscription(manager: EntityManager, s: NewSubscription): Promise<Subscription> {
    const [row] = await manager.query(
      `INSERT INTO subscriptions AS s (id, plan_id, seller_id, status, name, email, document, payment_type,
         card_token, card_brand, card_last4, card_exp_month, card_exp_year, manage_token_hash, anchor_at, trial_end,
         next_period, failed_attempts, current_period_start, current_period_end, next_charge_at, cancel_at_period_end,
         canceled_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
       RETURNING ${SUBSCRIPTION_COLUMNS}`,
      [
        s.id,
        s.planId,
        s.sellerId,
        s.status,
        s.name,
        s.email,
        s.document,
        s.paymentType,
        s.card?.token ?? null,
        s.card?.brand ?? null,
        s.card?.last4 ?? null,
        s.card?.expMonth ?? null,
        s.card?.expYear ?? null,
        s.manageTokenHash,
        s.anchorAt,
        s.trialEnd,
        s.nextPeriod,
        s.failedAttempts,
        s.currentPeriodStart,
        s.currentPeriodEnd,
        s.nextChargeAt,
        s.cancelAtPeriodEnd,
        s.canceledAt,
      ],
    );
    return toSubscription(row);
  }

  async findSubscription(id: string): Promise<Subscription | null> {
    const [row] = await this.dataSource.query(`SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions s WHERE s.id = $1`, [
      id,
    ]);
    return row ? toSubscription(row) : null;
  }

  /** Locks the subscription for the caller's transaction, with its manage token's hash. */
  async lockSubscription(
    manager: EntityManager,
    id: string,
  ): Promise<{ subscription: Subscription; manageTokenHash: string } | null> {
    const [row] = await manager.query(
      `SELECT ${SUBSCRIPTION_COLUMNS}, s.manage_token_hash FROM subscriptions s WHERE s.id = $1 FOR UPDATE`,
      [id],
    );
    return row ? { subscription: toSubscription(row), manageTokenHash: row.manage_token_hash } : null;
  }

  /** A page of a plan's subscribers (the plan is the seller's: checked by the caller). */
  async listSubscribers(planId: string, status: SubscriptionStatus | undefined, page: PageRequest) {
    const params: unknown[] = [planId];
    const where = ['s.plan_id = $1'];
    if (status) where.push(`s.status = $${params.push(status)}`);
    const { condition, orderAndLimit } = keysetSql('s.seq', page, params);
    if (condition) where.push(condition);
    const rows = await this.dataSource.query(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions s WHERE ${where.join(' AND ')} ${orderAndLimit}`,
      params,
    );
    return rows.map(toSubscription) as Subscription[];
  }

  async updateSubscription(manager: EntityManager, id: string, changes: SubscriptionChanges): Promise<Subscription> {
    const params: unknown[] = [id];
    const sets = Object.entries(changes)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${SUBSCRIPTION_FIELDS[key as keyof SubscriptionChanges]} = $${params.push(value)}`);
    const [rows] = await manager.query(
      `UPDATE subscriptions s SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE s.id = $1
       RETURNING ${SUBSCRIPTION_COLUMNS}`,
      params,
    );
    return toSubscription(rows[0]);
  }

  /**
   * Up to `limit` live subscriptions due at `now`, with their plans, locked for the caller's
   * transaction; rows another worker holds are skipped, and so are subscriptions with a charge
   * in flight.
   */
  async lockDue(manager: EntityManager, now: Date, limit: number): Promise<DueSubscription[]> {
    const rows = await manager.query(
      `SELECT ${SUBSCRIPTION_COLUMNS}, to_jsonb(p) || jsonb_build_object('seq', p.seq::text) AS plan
       FROM subscriptions s JOIN subscription_plans p ON p.id = s.plan_id
       WHERE s.status <> 'canceled' AND s.next_charge_at <= $1
         AND NOT EXISTS (SELECT 1 FROM subscription_charges c WHERE c.subscription_id = s.id AND c.status = 'processing')
       ORDER BY s.next_charge_at
       LIMIT $2
       FOR UPDATE OF s SKIP LOCKED`,
      [now, limit],
    );
    return rows.map((row: SubscriptionRow & { plan: PlanRow }) => ({
      subscription: toSubscription(row),
      plan: toPlan({
        ...row.plan,
        created_at: new Date(row.plan.created_at),
        updated_at: new Date(row.plan.updated_at),
      }),
    }));
  }

  // ---- charges

  /**
   * Claims a charge attempt: the row exists before the processor is called, and its unique
   * keys refuse a second claim of the same attempt, or a second live charge of the period.
   * Null when already claimed.
   */
  async claimCharge(manager: EntityManager, charge: NewCharge): Promise<SubscriptionCharge | null> {
    const [row] = await manager.query(
      `INSERT INTO subscription_charges (id, subscription_id, period, attempt, status, amount, period_start, period_end,
         due_at, as_of, lease, transaction_id)
       VALUES (COALESCE($12::uuid, gen_random_uuid()), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT DO NOTHING
       RETURNING ${CHARGE_COLUMNS}`,
      [
        charge.subscriptionId,
        charge.period,
        charge.attempt,
        charge.status,
        charge.amount,
        charge.periodStart,
        charge.periodEnd,
        charge.dueAt,
        charge.asOf,
        charge.lease,
        charge.transactionId,
        charge.id ?? null,
      ],
    );
    return row ? toCharge(row) : null;
  }

  /** The charge, locked for the caller's transaction. */
  async lockCharge(manager: EntityManager, id: string): Promise<SubscriptionCharge | null> {
    const [row] = await manager.query(`SELECT ${CHARGE_COLUMNS} FROM subscription_charges WHERE id = $1 FOR UPDATE`, [
      id,
    ]);
    return row ? toCharge(row) : null;
  }

  async findCharge(id: string): Promise<SubscriptionCharge | null> {
    const [row] = await this.dataSource.query(`SELECT ${CHARGE_COLUMNS} FROM subscription_charges WHERE id = $1`, [id]);
    return row ? toCharge(row) : null;
  }

  async hasChargeInFlight(manager: EntityManager, subscriptionId: string): Promise<boolean> {
    const rows = await manager.query(
      `SELECT 1 FROM subscription_charges WHERE subscription_id = $1 AND status = 'processing' LIMIT 1`,
      [subscriptionId],
    );
    return rows.length > 0;
  }

  async updateCharge(
    manager: EntityManager,
    id: string,
    changes: { status: ChargeStatus; transactionId?: string | null },
  ): Promise<void> {
    await manager.query(
      `UPDATE subscription_charges SET status = $2, transaction_id = COALESCE($3, transaction_id), updated_at = now()
       WHERE id = $1`,
      [id, changes.status, changes.transactionId ?? null],
    );
  }

  /** The subscription's pix charge awaiting payment, if any. */
  async openCharge(manager: EntityManager, subscriptionId: string): Promise<SubscriptionCharge | null> {
    const [row] = await manager.query(
      `SELECT ${CHARGE_COLUMNS} FROM subscription_charges WHERE subscription_id = $1 AND status = 'pending'`,
      [subscriptionId],
    );
    return row ? toCharge(row) : null;
  }

  async chargesOf(subscriptionId: string): Promise<SubscriptionCharge[]> {
    const rows = await this.dataSource.query(
      `SELECT ${CHARGE_COLUMNS} FROM subscription_charges WHERE subscription_id = $1 ORDER BY seq`,
      [subscriptionId],
    );
    return rows.map(toCharge);
  }

  /**
   * Holds a renewal run's lease: a session advisory lock on its own connection, for as long as
   * the run lives. If the process dies, PostgreSQL ends the session and frees the lease.
   */
  async holdLease(key: string): Promise<RenewalLease> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    } catch (error) {
      await runner.release();
      throw error;
    }
    return {
      key,
      // A failed connection releases its query runner (TypeORM's error listener): the session, and
      // the lock with it, are gone.
      async held() {
        if (runner.isReleased) return false;
        try {
          await runner.query('SELECT 1');
          return true;
        } catch {
          return false;
        }
      },
      async release() {
        if (runner.isReleased) return;
        try {
          await runner.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
        } finally {
          await runner.release();
        }
      },
    };
  }

  /**
   * Charges in flight whose renewal worker is gone: its lease (a session advisory lock held for
   * the whole run) is free. Locked, and the dead leases held, for the caller's transaction.
   */
  async lockAbandonedClaims(
    manager: EntityManager,
    limit: number,
  ): Promise<Array<SubscriptionCharge & { sellerId: string }>> {
    const rows = await manager.query(
      `SELECT c.id, c.subscription_id, c.period, c.attempt, c.status, c.amount, c.period_start, c.period_end, c.due_at,
              c.as_of, c.transaction_id, c.created_at, s.seller_id
       FROM subscription_charges c JOIN subscriptions s ON s.id = c.subscription_id
       WHERE c.status = 'processing' AND pg_try_advisory_xact_lock(c.lease)
       LIMIT $1 FOR UPDATE OF c SKIP LOCKED`,
      [limit],
    );
    return rows.map((row: ChargeRow & { seller_id: string }) => ({ ...toCharge(row), sellerId: row.seller_id }));
  }
}

/** Rows as PostgreSQL answers them (bigint money as text, timestamps as Date). */
interface PlanRow {
  id: string;
  seq: string;
  seller_id: string;
  name: string;
  description: string | null;
  amount: string;
  interval: Interval;
  interval_count: number;
  trial_days: number;
  payment_types: SubscriptionPaymentType[];
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

interface SubscriptionRow {
  id: string;
  seq: string;
  plan_id: string;
  seller_id: string;
  status: SubscriptionStatus;
  name: string;
  email: string;
  document: string;
  payment_type: SubscriptionPaymentType;
  card_token: string | null;
  card_brand: string | null;
  card_last4: string | null;
  card_exp_month: number | null;
  card_exp_year: number | null;
  anchor_at: Date;
  trial_end: Date | null;
  next_period: number;
  failed_attempts: number;
  current_period_start: Date;
  current_period_end: Date;
  next_charge_at: Date | null;
  cancel_at_period_end: boolean;
  canceled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface ChargeRow {
  id: string;
  subscription_id: string;
  period: number;
  attempt: number;
  status: ChargeStatus;
  amount: string;
  period_start: Date;
  period_end: Date;
  due_at: Date;
  as_of: Date;
  transaction_id: string | null;
  created_at: Date;
}

function toPlan(row: PlanRow): SubscriptionPlan {
  return {
    id: row.id,
    seq: row.seq,
    sellerId: row.seller_id,
    name: row.name,
    description: row.description,
    amount: centsFromDb(row.amount),
    interval: row.interval,
    intervalCount: row.interval_count,
    trialDays: row.trial_days,
    paymentTypes: row.payment_types,
    active: row.active,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toSubscription(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    seq: row.seq,
    planId: row.plan_id,
    sellerId: row.seller_id,
    status: row.status,
    name: row.name,
    email: row.email,
    document: row.document,
    paymentType: row.payment_type,
    card: row.card_token
      ? {
          token: row.card_token,
          brand: row.card_brand!,
          last4: row.card_last4!,
          expMonth: row.card_exp_month!,
          expYear: row.card_exp_year!,
        }
      : null,
    anchorAt: row.anchor_at,
    trialEnd: row.trial_end,
    nextPeriod: row.next_period,
    failedAttempts: row.failed_attempts,
    currentPeriodStart: row.current_period_start,
    currentPeriodEnd: row.current_period_end,
    nextChargeAt: row.next_charge_at,
    cancelAtPeriodEnd: row.cancel_at_period_end,
    canceledAt: row.canceled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toCharge(row: ChargeRow): SubscriptionCharge {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    period: row.period,
    attempt: row.attempt,
    status: row.status,
    amount: centsFromDb(row.amount),
    periodStart: row.period_start,
    periodEnd: row.period_end,
    dueAt: row.due_at,
    asOf: row.as_of,
    transactionId: row.transaction_id,
    createdAt: row.created_at,
  };
}
