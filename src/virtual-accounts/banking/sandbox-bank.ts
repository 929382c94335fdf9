import { Injectable } from '@nestjs/common';
import { boletoPayableUntil, dateInDays } from '../../transactions/processor/payment-processor';
import { sandboxDigitableLine, sandboxPixCode } from '../../transactions/processor/sandbox-codes';
import { BankingPort, DepositInstructions, DepositRequest, PayoutOutcome, PayoutRequest } from './banking-port';

/** Payouts to this PIX key fail in the sandbox, so clients can test the reversal. */
export const SANDBOX_FAILING_PIX_KEY = 'fail@sandbox.test';
/** Payouts to a bank account with this number fail in the sandbox. */
export const SANDBOX_FAILING_ACCOUNT = '0000000';

const PIX_VALIDITY_MS = 30 * 60_000;
const BOLETO_DAYS = 3;

/**
 * The built-in bank for development and tests: deposits are paid in through
 * POST /sandbox/deposits/{id}/confirm/, payouts complete at once (within seconds of the request,
 * through the payout job) except to the failing PIX key and account number above. Nothing leaves
 * the process.
 */
@Injectable()
export class SandboxBank implements BankingPort {
  readonly name = 'sandbox';

  async collect(request: DepositRequest): Promise<DepositInstructions> {
    if (request.method === 'pix') {
      const expiresAt = new Date(request.at.getTime() + PIX_VALIDITY_MS);
      return {
        pix: { qr_code: sandboxPixCode(request.depositId, request.amount), expires_at: expiresAt.toISOString() },
        boleto: null,
        expiresAt,
      };
    }
    const dueDate = dateInDays(BOLETO_DAYS, request.at);
    return {
      pix: null,
      boleto: { digitable_line: sandboxDigitableLine(request.depositId, request.amount), due_date: dueDate },
      expiresAt: boletoPayableUntil(dueDate),
    };
  }

  async payOut(request: PayoutRequest): Promise<PayoutOutcome> {
    const destination = request.destination;
    if ('pix_key' in destination && destination.pix_key.toLowerCase() === SANDBOX_FAILING_PIX_KEY) {
      return { status: 'failed', reason: 'pix_key_not_found' };
    }
    if ('bank_account' in destination && destination.bank_account.account.split('-')[0] === SANDBOX_FAILING_ACCOUNT) {
      return { status: 'failed', reason: 'bank_account_closed' };
    }
    return { status: 'completed', reference: `sbx_payout_${request.payoutId.replace(/-/g, '')}` };
  }
}
