import fc from 'fast-check';
import { SYSTEM_VOID_REASONS } from '../transactions/void-reasons';
import {
  available,
  hold,
  OrderStatus,
  pendingOrderOutcome,
  release,
  Seats,
  sell,
  settlementAction,
  unsell,
} from './order-state';

const CHECKOUT_EXPIRED = SYSTEM_VOID_REASONS.checkoutExpired;

type TxStatus = 'none' | 'pending' | 'approved' | 'declined' | 'voided';
interface Order {
  seats: number;
  status: OrderStatus;
  tx: TxStatus;
}

/** The transaction moves the transactions service allows. */
const TX_MOVES: Record<TxStatus, TxStatus[]> = {
  none: ['pending', 'approved', 'declined'],
  pending: ['approved', 'declined', 'voided'],
  approved: ['voided'],
  declined: [],
  voided: [],
};

type Step =
  | { kind: 'checkout'; seats: number }
  | { kind: 'settle'; order: number; to: TxStatus; expiry: boolean }
  | { kind: 'expire_without_charge'; order: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('checkout' as const), seats: fc.integer({ min: 1, max: 4 }) }),
  fc.record({
    kind: fc.constant('settle' as const),
    order: fc.nat(),
    to: fc.constantFrom<TxStatus>('pending', 'approved', 'declined', 'voided'),
    expiry: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('expire_without_charge' as const), order: fc.nat() }),
);

/** Runs the steps through the model the checkout service follows; checks the invariants after each. */
function run(quantity: number, steps: Step[]) {
  let seats: Seats = { quantity, sold: 0, held: 0 };
  const orders: Order[] = [];
  const check = () => {
    expect(seats.sold + seats.held).toBeLessThanOrEqual(seats.quantity);
    expect(available(seats)).toBe(seats.quantity - seats.sold - seats.held);
    expect(available(seats)).toBeGreaterThanOrEqual(0);
    const sum = (status: OrderStatus) =>
      orders.filter((o) => o.status === status).reduce((total, o) => total + o.seats, 0);
    expect(seats.held).toBe(sum('pending'));
    expect(seats.sold).toBe(sum('paid'));
  };
  const settle = (order: Order, to: TxStatus, voidReason: string | null) => {
    order.tx = to;
    const action = settlementAction(order.status, { status: to, void_reason: voidReason });
    switch (action.kind) {
      case 'complete':
        seats = sell(seats, order.seats);
        order.status = 'paid';
        break;
      case 'release':
        seats = release(seats, order.seats);
        order.status = action.status;
        break;
      case 'cancel_paid':
        seats = unsell(seats, order.seats);
        order.status = 'canceled';
        break;
      case 'void_charge':
        // The queued void runs later; its own settlement must then change nothing.
        settle(order, 'voided', 'order_released');
        break;
    }
  };
  for (const s of steps) {
    if (s.kind === 'checkout') {
      const held = hold(seats, s.seats);
      if (held) {
        seats = held;
        orders.push({ seats: s.seats, status: 'pending', tx: 'none' });
      } else {
        expect(available(seats)).toBeLessThan(s.seats);
      }
    } else if (orders.length > 0) {
      const order = orders[s.order % orders.length];
      if (s.kind === 'settle') {
        if (TX_MOVES[order.tx].includes(s.to)) settle(order, s.to, s.expiry ? CHECKOUT_EXPIRED : 'seller_void');
      } else if (order.status === 'pending' && order.tx === 'none') {
        seats = release(seats, order.seats);
        order.status = 'expired';
      }
    }
    check();
  }
  // The expiry job at the end of time: every pending order's charge is voided, or it had none.
  for (const order of orders.filter((o) => o.status === 'pending')) {
    if (order.tx === 'none') {
      seats = release(seats, order.seats);
      order.status = 'expired';
    } else settle(order, 'voided', CHECKOUT_EXPIRED);
  }
  check();
  expect(seats.held).toBe(0);
  return { seats, orders };
}

describe('seat inventory model', () => {
  it('for any interleaving of holds, payments, declines, voids and expiries: sold + held <= quantity, available = quantity - sold - held', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.array(step, { maxLength: 120 }), (quantity, steps) => {
        run(quantity, steps);
      }),
      { numRuns: 500 },
    );
  });

  it('a hold never takes more than is left', () => {
    expect(hold({ quantity: 5, sold: 2, held: 2 }, 1)).toEqual({ quantity: 5, sold: 2, held: 3 });
    expect(hold({ quantity: 5, sold: 2, held: 2 }, 2)).toBeNull();
  });

  it('maps each settlement of an order to one move', () => {
    const tx = (status: string, void_reason: string | null = null) => ({ status, void_reason });
    expect(settlementAction('pending', tx('pending'))).toEqual({ kind: 'link' });
    expect(settlementAction('pending', tx('approved'))).toEqual({ kind: 'complete' });
    expect(settlementAction('pending', tx('declined'))).toEqual({ kind: 'release', status: 'declined' });
    expect(settlementAction('pending', tx('voided', CHECKOUT_EXPIRED))).toEqual({ kind: 'release', status: 'expired' });
    expect(settlementAction('pending', tx('voided', 'charge_interrupted'))).toEqual({
      kind: 'release',
      status: 'canceled',
    });
    expect(settlementAction('paid', tx('voided'))).toEqual({ kind: 'cancel_paid' });
    expect(settlementAction('paid', tx('approved'))).toEqual({ kind: 'none' });
    expect(settlementAction('expired', tx('approved'))).toEqual({ kind: 'void_charge' });
    expect(settlementAction('expired', tx('pending'))).toEqual({ kind: 'void_charge' });
    expect(settlementAction('declined', tx('voided'))).toEqual({ kind: 'none' });
  });

  it('tells where a pending order goes with its transaction, and the reason it records', () => {
    const tx = (status: string, decline_reason: string | null = null, void_reason: string | null = null) => ({
      status,
      decline_reason,
      void_reason,
    });
    expect(pendingOrderOutcome(tx('pending'))).toEqual({ status: 'pending', reason: null });
    expect(pendingOrderOutcome(tx('approved'))).toEqual({ status: 'paid', reason: null });
    expect(pendingOrderOutcome(tx('declined', 'insufficient_funds'))).toEqual({
      status: 'declined',
      reason: 'insufficient_funds',
    });
    expect(pendingOrderOutcome(tx('voided', null, CHECKOUT_EXPIRED))).toEqual({
      status: 'expired',
      reason: CHECKOUT_EXPIRED,
    });
    expect(pendingOrderOutcome(tx('voided', null, 'charge_interrupted'))).toEqual({
      status: 'canceled',
      reason: 'charge_interrupted',
    });
    // A seller's void: its words stay on the transaction; the order records a code of its own.
    for (const words of ['insufficient_funds', 'not_paid_in_time', 'Customer cancelled', null]) {
      expect(pendingOrderOutcome(tx('voided', null, words))).toEqual({ status: 'canceled', reason: 'payment_voided' });
    }
  });
});
