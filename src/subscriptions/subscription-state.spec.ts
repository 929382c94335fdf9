import type { Subscription } from './entities/subscription.types';
import { failed, paid, renewalAction } from './subscription-state';

const monthly = { interval: 'month' as const, intervalCount: 1 };
const at = (iso: string) => new Date(iso);

function subscription(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: 's',
    seq: '1',
    planId: 'p',
    sellerId: 'x',
    status: 'active',
    name: 'Ana',
    email: 'ana@example.com',
    document: '52998224725',
    paymentType: 'credit',
    card: null,
    anchorAt: at('2027-01-31T12:00:00Z'),
    trialEnd: null,
    nextPeriod: 1,
    failedAttempts: 0,
    currentPeriodStart: at('2027-01-31T12:00:00Z'),
    currentPeriodEnd: at('2027-02-28T12:00:00Z'),
    nextChargeAt: at('2027-02-28T12:00:00Z'),
    cancelAtPeriodEnd: false,
    canceledAt: null,
    createdAt: at('2027-01-31T12:00:00Z'),
    updatedAt: at('2027-01-31T12:00:00Z'),
    ...overrides,
  };
}

describe('subscription state machine', () => {
  it('a paid period becomes current, with the next charge at its end', () => {
    expect(paid(subscription({ status: 'past_due' }), monthly, 1)).toEqual({
      changes: {
        status: 'active',
        nextPeriod: 2,
        failedAttempts: 0,
        currentPeriodStart: at('2027-02-28T12:00:00Z'),
        currentPeriodEnd: at('2027-03-31T12:00:00Z'),
        nextChargeAt: at('2027-03-31T12:00:00Z'),
      },
      events: ['subscription.charged'],
    });
  });

  it('a failed renewal goes past_due once, retries at +1, +3, +5 days, then cancels', () => {
    const due = at('2027-02-28T12:00:00Z');
    const first = failed(subscription(), { attempt: 0, dueAt: due, asOf: due });
    expect(first).toEqual({
      changes: { status: 'past_due', failedAttempts: 1, nextChargeAt: at('2027-03-01T12:00:00Z') },
      events: ['subscription.past_due'],
    });
    const pastDue = subscription({ status: 'past_due' });
    expect(failed(pastDue, { attempt: 1, dueAt: due, asOf: at('2027-03-01T12:00:00Z') })).toEqual({
      changes: { status: 'past_due', failedAttempts: 2, nextChargeAt: at('2027-03-03T12:00:00Z') },
      events: [],
    });
    expect(failed(pastDue, { attempt: 3, dueAt: due, asOf: at('2027-03-05T12:00:00Z') })).toEqual({
      changes: { status: 'canceled', canceledAt: at('2027-03-05T12:00:00Z'), nextChargeAt: null, failedAttempts: 4 },
      events: ['subscription.canceled'],
    });
  });

  it('a retry time already gone by (a late run) is moved to a day after the failure', () => {
    const due = at('2027-02-28T12:00:00Z');
    const late = at('2027-03-10T00:00:00Z');
    expect(
      failed(subscription({ status: 'past_due' }), { attempt: 1, dueAt: due, asOf: late }).changes.nextChargeAt,
    ).toEqual(at('2027-03-11T00:00:00Z'));
  });

  it('an incomplete subscription whose first pix is withdrawn is canceled, not retried', () => {
    const due = at('2027-02-28T12:00:00Z');
    expect(failed(subscription({ status: 'incomplete' }), { attempt: 0, dueAt: due, asOf: due }).changes.status).toBe(
      'canceled',
    );
  });

  describe('what the renewal job does with a due subscription', () => {
    it('charges the next period, at the attempt it has reached', () => {
      expect(renewalAction(subscription({ failedAttempts: 2 }), monthly, null, at('2027-02-28T12:00:00Z'))).toEqual({
        kind: 'charge',
        period: 1,
        attempt: 2,
        dueAt: at('2027-02-28T12:00:00Z'),
        periodStart: at('2027-02-28T12:00:00Z'),
        periodEnd: at('2027-03-31T12:00:00Z'),
      });
    });

    it('a pix charge sent late is due when it is sent, so that it is payable for its whole window', () => {
      const late = at('2027-03-10T12:00:00Z');
      expect(renewalAction(subscription({ paymentType: 'pix' }), monthly, null, late)).toMatchObject({
        kind: 'charge',
        dueAt: late,
        periodStart: at('2027-02-28T12:00:00Z'),
      });
      // A card charge keeps the period's due date: its retries are counted from it.
      expect(renewalAction(subscription(), monthly, null, late)).toMatchObject({
        dueAt: at('2027-02-28T12:00:00Z'),
      });
    });

    it('a pix renewal refused at each attempt follows the dunning timeline: +1, +3, +5 days, then canceled', () => {
      // Each attempt is charged as the job finds it (a minute late) and refused (no pix sent).
      const due = at('2027-02-28T12:00:00Z');
      let s = subscription({ paymentType: 'pix' });
      const attempts: Date[] = [];
      for (let asOf = new Date(due.getTime() + 60_000); s.status !== 'canceled';) {
        const action = renewalAction(s, monthly, null, asOf);
        if (action.kind !== 'charge') throw new Error(`expected a charge, got ${action.kind}`);
        attempts.push(asOf);
        s = { ...s, ...failed(s, { attempt: action.attempt, dueAt: action.dueAt, asOf }).changes };
        if (s.nextChargeAt) asOf = new Date(s.nextChargeAt.getTime() + 60_000);
      }
      expect(attempts.map((a) => Math.floor((a.getTime() - due.getTime()) / 86_400_000))).toEqual([0, 1, 3, 5]);
      expect(s.canceledAt).toEqual(at('2027-03-05T12:01:00Z'));
    });

    it('cancels at the period end when asked to, withdrawing an open pix charge', () => {
      const action = renewalAction(
        subscription({ cancelAtPeriodEnd: true }),
        monthly,
        null,
        at('2027-02-28T12:00:00Z'),
      );
      expect(action).toMatchObject({
        kind: 'cancel',
        voidOpenCharge: false,
        transition: { events: ['subscription.canceled'] },
      });
    });

    it('an unpaid pix: past_due at its due date, canceled 5 days after the renewal was due', () => {
      const open = { dueAt: at('2027-02-28T12:00:00Z') };
      expect(renewalAction(subscription(), monthly, open, at('2027-03-01T12:00:00Z'))).toEqual({
        kind: 'past_due',
        transition: {
          changes: { status: 'past_due', nextChargeAt: at('2027-03-05T12:00:00Z') },
          events: ['subscription.past_due'],
        },
      });
      expect(
        renewalAction(subscription({ status: 'past_due' }), monthly, open, at('2027-03-05T12:00:00Z')),
      ).toMatchObject({
        kind: 'cancel',
        voidOpenCharge: true,
      });
      expect(
        renewalAction(subscription({ status: 'incomplete' }), monthly, open, at('2027-03-01T12:00:00Z')),
      ).toMatchObject({
        kind: 'cancel',
      });
    });
  });
});
