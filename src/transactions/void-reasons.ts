/**
 * The reasons the platform gives the voids it makes itself, named once. Each says what happened
 * (an order of a checkout is `expired` only when its void says `checkout_expired`), so a seller's
 * void may not give one of them (VoidTransactionDto): its own reason is its own words.
 */
export const SYSTEM_VOID_REASONS = {
  /** An API pix or boleto charge not paid in time. */
  paymentExpired: 'payment_expired',
  /** A charge interrupted before the processor heard of it (the reconciler). */
  chargeInterrupted: 'charge_interrupted',
  /** The processor voided a charge itself. */
  voidedByProcessor: 'charge_voided_by_processor',
  /** A checkout's order not paid in time. */
  checkoutExpired: 'checkout_expired',
  /** A charge paid for a checkout order that no longer holds its seats. */
  orderReleased: 'order_released',
  /** A subscription canceled while its charge was open. */
  subscriptionCanceled: 'subscription_canceled',
  /** A subscription's charge whose billing record could not be written. */
  chargeNotRecorded: 'charge_not_recorded',
  /** A second charge for a subscription period already charged. */
  periodAlreadyCharged: 'period_already_charged',
} as const;

const RESERVED = new Set<string>(Object.values(SYSTEM_VOID_REASONS));

/** Whether a seller's void reason is one the platform gives its own voids (compared as a code: trimmed, any case). */
export function isSystemVoidReason(reason: string): boolean {
  return RESERVED.has(reason.trim().toLowerCase());
}
