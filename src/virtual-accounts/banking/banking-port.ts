import type { Cents } from '../../common/money/money';

/**
 * The payout port: the bank or PSP that holds the virtual accounts' money. It sends payouts
 * (bill payments, PIX and bank transfers) and issues the PIX charges and boletos through which
 * deposits are paid in. Chosen by PAYMENTS_PROCESSOR, like the payment processor.
 */
export const BANKING_PORT = Symbol('BANKING_PORT');

export type DepositMethod = 'pix' | 'boleto';

export interface DepositRequest {
  /** Our deposit id: the provider's reference for the charge. */
  depositId: string;
  amount: Cents;
  method: DepositMethod;
  /** Now, as the caller's clock says. */
  at: Date;
}

export interface DepositInstructions {
  pix: { qr_code: string; expires_at: string } | null;
  boleto: { digitable_line: string; due_date: string } | null;
  /** After this the payer can no longer pay: the deposit expires. */
  expiresAt: Date;
}

export type PayoutDestination =
  | { payee: { name: string; document: string | null }; barcode: string }
  | { pix_key: string }
  | { bank_account: { bank: string; branch: string; account: string; document: string } };

export interface PayoutRequest {
  /** Our payout id: the provider's idempotency key, so a retried send never pays twice. */
  payoutId: string;
  amount: Cents;
  destination: PayoutDestination;
  description: string | null;
}

export type PayoutOutcome = { status: 'completed'; reference: string } | { status: 'failed'; reason: string };

export interface BankingPort {
  readonly name: string;
  collect(request: DepositRequest): Promise<DepositInstructions>;
  /**
   * Sends a payout and answers its final outcome. Throws when the outcome is unknown (timeout,
   * provider down): the caller sends again later with the same payout id.
   */
  payOut(request: PayoutRequest): Promise<PayoutOutcome>;
}
