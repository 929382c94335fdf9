import { calendarDate, onCalendar } from '../../common/time/calendar';
import type { Cents } from '../../common/money/money';
import type { PaymentType } from '../../split/table';

/**
 * The port to a payment processor (acquirer / PSP). The service never keeps a card number
 * or CVV: it hands the card to the processor and stores only brand and last 4 digits.
 */
export const PAYMENT_PROCESSOR = Symbol('PAYMENT_PROCESSOR');

export interface CardData {
  number: string;
  holderName: string;
  expMonth: number;
  expYear: number;
  cvv: string;
}

/**
 * A card kept on file by the processor: the token charges it later; brand, last 4 and expiry
 * may be shown. The number and CVV stay with the processor.
 */
export interface CardToken {
  token: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

export interface ChargeRequest {
  /** Our transaction id: the processor's idempotency key. */
  transactionId: string;
  amount: Cents;
  paymentType: PaymentType;
  installments: number;
  card?: CardData;
  /** A card on file (from tokenizeCard), charged instead of `card`. */
  cardToken?: string;
  description?: string | null;
  customer?: { name?: string; email?: string; document?: string } | null;
  /**
   * Until when a pix or boleto charge can be paid (the payer's window; absent: the processor's
   * default): a pix code expires then; a boleto is due on the last day that ends by then (in
   * Brasília, CALENDAR_TIME_ZONE), as payableUntilOf reads it back.
   */
  payableUntil?: Date;
}

export type ChargeResult =
  | { status: 'approved'; reference: string }
  | { status: 'declined'; reference: string | null; declineReason: string }
  | {
      status: 'pending';
      reference: string;
      pix?: { qr_code: string; expires_at: string };
      boleto?: { digitable_line: string; due_date: string };
    };

/** How a pending charge is paid: a pix code, or a boleto. */
export interface PaymentInstructions {
  pix?: { qr_code: string; expires_at: string } | null;
  boleto?: { digitable_line: string; due_date: string } | null;
}

/**
 * Until when a pending charge can be paid: a pix until its `expires_at`, a boleto until the end
 * of its due date (in Brasília); null without instructions.
 */
export function payableUntilOf({ pix, boleto }: PaymentInstructions): Date | null {
  if (pix) return new Date(pix.expires_at);
  if (boleto) return boletoPayableUntil(boleto.due_date);
  return null;
}

/** What a boleto's `due_date` is, as the API's documents say it. */
export const DUE_DATE_DESCRIPTION =
  'A day in Brasília (America/Sao_Paulo): the boleto can be paid until that day ends there.';

/** The end of a boleto's due date (YYYY-MM-DD) in Brasília (see CALENDAR_TIME_ZONE): until when it can be paid. */
export function boletoPayableUntil(dueDate: string): Date {
  return calendarDate(dueDate).plus({ days: 1 }).toJSDate();
}

/** The date (YYYY-MM-DD) `days` after the date in Brasília at `from` (see CALENDAR_TIME_ZONE). */
export function dateInDays(days: number, from = new Date()): string {
  return onCalendar(from).plus({ days }).toFormat('yyyy-MM-dd');
}

/** What the processor holds of a charge: its result, or voided since. */
export type ChargeStatus = ChargeResult | { status: 'voided'; reference: string };

export interface PaymentProcessor {
  readonly name: string;
  /**
   * Charges once per `transactionId` (the idempotency key): asked again with the same id, it
   * answers the first charge's result. Throwing means the outcome is unknown (a timeout, an
   * error after the processor charged): the caller must ask `chargeStatus` later, never assume
   * the customer was not charged.
   */
  charge(request: ChargeRequest): Promise<ChargeResult>;
  /** The charge made with this idempotency key (our transaction id); null when the processor never received it. */
  chargeStatus(transactionId: string): Promise<ChargeStatus | null>;
  /** Keeps a card on file and answers its token; the card is not charged. */
  tokenizeCard(card: CardData): Promise<CardToken>;
  /**
   * Cancels (card) or withdraws (pix, boleto) a charge, known by its reference or, when the
   * answer was never recorded, by our transaction id (the charge's idempotency key).
   * Idempotent: voiding twice, or voiding what was never charged, is not an error.
   */
  void(charge: { transactionId: string; reference: string | null }): Promise<void>;
}
