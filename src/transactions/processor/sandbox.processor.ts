import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { cardExpired, detectBrand } from './card';
import {
  CardData,
  CardToken,
  ChargeRequest,
  ChargeResult,
  ChargeStatus,
  dateInDays,
  PaymentProcessor,
} from './payment-processor';
import { SandboxCardTokensRepository, StoredCard } from './sandbox-card-tokens.repository';
import { SandboxChargesRepository } from './sandbox-charges.repository';
import { sandboxDigitableLine, sandboxPixCode } from './sandbox-codes';

/** How long a sandbox pix charge can be paid when its caller names no window. */
const PIX_DEFAULT_MINUTES = 30;
/** In how many days a sandbox boleto is due when its caller names no window. */
const BOLETO_DEFAULT_DAYS = 3;

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
 * POST /sandbox/transactions/{id}/confirm/. Nothing leaves the service: the charges it took are
 * kept, by idempotency key, in its own table, so every API process sees them.
 */
@Injectable()
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  constructor(
    private readonly charges: SandboxChargesRepository,
    private readonly cards: SandboxCardTokensRepository,
  ) {}

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const card = request.cardToken ? await this.cards.find(request.cardToken) : undefined;
    const stored = await this.charges.insertOnce(request.transactionId, outcome(request, new Date(), card));
    // A key charged and voided since stays voided: the charge is not made again.
    return stored.status === 'voided'
      ? { status: 'declined', reference: stored.reference, declineReason: 'charge_voided' }
      : stored;
  }

  chargeStatus(transactionId: string): Promise<ChargeStatus | null> {
    return this.charges.find(transactionId);
  }

  async void(charge: { transactionId: string }): Promise<void> {
    await this.charges.markVoided(charge.transactionId);
  }

  /** Keeps the test card's outcome, brand, last 4 and expiry under a new token (never the number or CVV). */
  async tokenizeCard(card: CardData): Promise<CardToken> {
    const token: CardToken = {
      token: `tok_sbx_${randomBytes(16).toString('hex')}`,
      brand: detectBrand(card.number) ?? 'unknown',
      last4: card.number.slice(-4),
      expMonth: card.expMonth,
      expYear: card.expYear,
    };
    await this.cards.insert(token, SANDBOX_DECLINED_CARDS[card.number] ?? null);
    return token;
  }
}

/**
 * What the sandbox answers a charge: decided by the payment type and the test card number, or
 * for a card on file by what its token keeps (`null`: an unknown token).
 */
function outcome(request: ChargeRequest, at: Date, onFile?: StoredCard | null): ChargeResult {
  const reference = `sbx_${request.transactionId.replace(/-/g, '')}`;
  if (request.paymentType === 'pix') {
    return {
      status: 'pending',
      reference,
      pix: {
        qr_code: sandboxPixCode(request.transactionId, request.amount),
        expires_at: (request.payableUntil ?? new Date(at.getTime() + PIX_DEFAULT_MINUTES * 60_000)).toISOString(),
      },
    };
  }
  if (request.paymentType === 'boleto') {
    return {
      status: 'pending',
      reference,
      boleto: {
        digitable_line: sandboxDigitableLine(request.transactionId, request.amount),
        // The last day that ends by the caller's window.
        due_date: request.payableUntil ? dateInDays(-1, request.payableUntil) : dateInDays(BOLETO_DEFAULT_DAYS, at),
      },
    };
  }
  const declined =
    onFile !== undefined
      ? onFile === null
        ? 'invalid_card_token'
        : cardExpired(onFile.expMonth, onFile.expYear, at)
          ? 'expired_card'
          : onFile.outcome
      : request.card
        ? SANDBOX_DECLINED_CARDS[request.card.number]
        : 'card_missing';
  return declined ? { status: 'declined', reference, declineReason: declined } : { status: 'approved', reference };
}
