import { isSystemVoidReason, SYSTEM_VOID_REASONS } from '../transactions/void-reasons';

/**
 * The seat counters of a ticket type and the life of an order, as plain functions. The
 * database applies the same moves under the CHECK `sold + held <= quantity` (see the
 * repositories); these functions are the model the property test explores, and
 * `settlementAction` is what the checkout service does when an order's transaction changes.
 */
export interface Seats {
  quantity: number;
  sold: number;
  held: number;
}

export type OrderStatus = 'pending' | 'paid' | 'declined' | 'expired' | 'canceled';
export const ORDER_STATUSES: OrderStatus[] = ['pending', 'paid', 'declined', 'expired', 'canceled'];

export function available(seats: Seats): number {
  return seats.quantity - seats.sold - seats.held;
}

/** Holds `n` seats, or null when fewer are left (the database's CHECK refuses the UPDATE). */
export function hold(seats: Seats, n: number): Seats | null {
  return seats.sold + seats.held + n <= seats.quantity ? { ...seats, held: seats.held + n } : null;
}

/** A paid order's held seats become sold. */
export function sell(seats: Seats, n: number): Seats {
  return { ...seats, held: seats.held - n, sold: seats.sold + n };
}

/** An order that will not be paid gives its held seats back. */
export function release(seats: Seats, n: number): Seats {
  return { ...seats, held: seats.held - n };
}

/** A paid order whose payment was reversed gives its sold seats back. */
export function unsell(seats: Seats, n: number): Seats {
  return { ...seats, sold: seats.sold - n };
}

export type SettlementAction =
  | { kind: 'none' }
  /** The transaction waits for payment: the order records it and keeps holding. */
  | { kind: 'link' }
  /** Paid: held seats sold, tickets issued and e-mailed, `checkout.completed`. */
  | { kind: 'complete' }
  /** Not paid: held seats released. */
  | { kind: 'release'; status: 'declined' | 'expired' | 'canceled' }
  /** A paid order's payment reversed: sold seats back, tickets no longer valid. */
  | { kind: 'cancel_paid' }
  /** A charge that is or may still be paid for an order that no longer holds seats: voided (refunded). */
  | { kind: 'void_charge' };

/** What an order does when its transaction reaches `transaction.status`. */
export function settlementAction(
  order: OrderStatus,
  transaction: { status: string; void_reason: string | null },
): SettlementAction {
  if (order === 'pending') {
    switch (transaction.status) {
      case 'pending':
        return { kind: 'link' };
      case 'approved':
        return { kind: 'complete' };
      case 'declined':
        return { kind: 'release', status: 'declined' };
      case 'voided':
        return {
          kind: 'release',
          status: transaction.void_reason === SYSTEM_VOID_REASONS.checkoutExpired ? 'expired' : 'canceled',
        };
    }
    return { kind: 'none' };
  }
  if (order === 'paid') return transaction.status === 'voided' ? { kind: 'cancel_paid' } : { kind: 'none' };
  // Declined, expired or canceled: the seats are gone, so a charge that may still be paid is undone.
  return transaction.status === 'approved' || transaction.status === 'pending'
    ? { kind: 'void_charge' }
    : { kind: 'none' };
}

/**
 * Where a pending order goes when its transaction reaches `transaction.status` (it stays pending
 * while the transaction waits for payment, or for a status that does not move it), with the
 * reason a released order records.
 */
export function pendingOrderOutcome(transaction: {
  status: string;
  void_reason: string | null;
  decline_reason: string | null;
}): { status: OrderStatus; reason: string | null } {
  const action = settlementAction('pending', transaction);
  if (action.kind === 'complete') return { status: 'paid', reason: null };
  if (action.kind === 'release') {
    return { status: action.status, reason: transaction.decline_reason ?? orderVoidReason(transaction.void_reason) };
  }
  return { status: 'pending', reason: null };
}

/** What a payment voided by a seller tells the buyer's order: a code, as every reason an order records. */
export const PAYMENT_VOIDED = 'payment_voided';

/**
 * The reason an order records for its voided payment: the platform's own void reason (a code that
 * says what happened), or PAYMENT_VOIDED for a seller's void, whose words stay on its
 * transaction: a seller cannot show the buyer a decline or a timeout that never happened.
 */
function orderVoidReason(voidReason: string | null): string {
  return voidReason !== null && isSystemVoidReason(voidReason) ? voidReason : PAYMENT_VOIDED;
}
