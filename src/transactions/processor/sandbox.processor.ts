import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { ChargeRequest, ChargeResult, PaymentProcessor } from './payment-processor';

/** Test card numbers the sandbox declines, with the reason it gives. */
export const SANDBOX_DECLINED_CARDS: Record<string, string> = {
  '4000000000000002': 'card_declined',
  '4000000000009995': 'insufficient_funds',
  '4000000000000069': 'expired_card',
  '5105105105105100': 'card_declined',
};

/**
 * The built-in processor for development and tests: card charges are approved except for the
 * test numbers above; pix and boleto charges stay pending until confirmed through
 * POST /sandbox/transactions/{id}/confirm/. Nothing leaves the process.
 */
@Injectable()
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const reference = `sbx_${request.transactionId.replace(/-/g, '')}`;
    if (request.paymentType === 'pix') {
      return { status: 'pending', reference, pix: { qr_code: pixCode(request), expires_at: new Date(Date.now() + 30 * 60_000).toISOString() } };
    }
    if (request.paymentType === 'boleto') {
      return { status: 'pending', reference, boleto: { digitable_line: digitableLine(request), due_date: dueDate(3) } };
    }
    const declined = request.card ? SANDBOX_DECLINED_CARDS[request.card.number] : 'card_missing';
    return declined ? { status: 'declined', reference, declineReason: declined } : { status: 'approved', reference };
  }

  async void(): Promise<void> {
    // Nothing to undo outside the process.
  }
}

function pixCode(request: ChargeRequest): string {
  const amount = (request.amount / 100).toFixed(2);
  const txid = request.transactionId.replace(/-/g, '').slice(0, 25);
  return `00020126580014BR.GOV.BCB.PIX0136${request.transactionId}5204000053039865406${amount.padStart(6, '0')}5802BR5913SANDBOX SELLER6009SAO PAULO62290525${txid}6304`;
}

function digitableLine(request: ChargeRequest): string {
  const digits = BigInt(`0x${createHash('sha256').update(request.transactionId).digest('hex').slice(0, 24)}`).toString().padEnd(33, '0').slice(0, 33);
  const amount = String(request.amount).padStart(10, '0');
  return `${digits}${'9999'}${amount}`.slice(0, 47);
}

function dueDate(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}
