import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { formatMoney } from '../../common/money/money';
import { detectBrand } from './card';
import { CardData, CardToken, ChargeRequest, ChargeResult, PaymentProcessor } from './payment-processor';

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

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const reference = `sbx_${request.transactionId.replace(/-/g, '')}`;
    if (request.paymentType === 'pix') {
      return {
        status: 'pending',
        reference,
        pix: { qr_code: pixCode(request), expires_at: new Date(Date.now() + 30 * 60_000).toISOString() },
      };
    }
    if (request.paymentType === 'boleto') {
      return { status: 'pending', reference, boleto: { digitable_line: digitableLine(request), due_date: dueDate(3) } };
    }
    const declined = request.cardToken
      ? await this.tokenOutcome(request.cardToken)
      : request.card
        ? SANDBOX_DECLINED_CARDS[request.card.number]
        : 'card_missing';
    return declined ? { status: 'declined', reference, declineReason: declined } : { status: 'approved', reference };
  }

  /**
   * The sandbox's card vault keeps per token only what it needs to play a processor: the test
   * card's outcome, brand, last 4 digits and expiry (never the number or CVV).
   */
  async tokenizeCard(card: CardData): Promise<CardToken> {
    const stored: CardToken = {
      token: `tok_sbx_${randomBytes(16).toString('hex')}`,
      brand: detectBrand(card.number) ?? 'unknown',
      last4: card.number.slice(-4),
      expMonth: card.expMonth,
      expYear: card.expYear,
    };
    await this.dataSource.query(
      `INSERT INTO sandbox_card_tokens (token, outcome, brand, last4, exp_month, exp_year) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        stored.token,
        SANDBOX_DECLINED_CARDS[card.number] ?? null,
        stored.brand,
        stored.last4,
        stored.expMonth,
        stored.expYear,
      ],
    );
    return stored;
  }

  /** Why a charge of this token is declined, or undefined when it is approved. */
  private async tokenOutcome(token: string): Promise<string | undefined> {
    const [row]: Array<{ outcome: string | null; expired: boolean }> = await this.dataSource.query(
      `SELECT outcome, make_date(exp_year, exp_month, 1) + interval '1 month' <= now() AS expired
       FROM sandbox_card_tokens WHERE token = $1`,
      [token],
    );
    if (!row) return 'invalid_card_token';
    if (row.expired) return 'expired_card';
    return row.outcome ?? undefined;
  }

  async void(): Promise<void> {
    // Nothing to undo outside the process.
  }
}

/** A PIX "copia e cola" payload in the EMV layout (without a real CRC: sandbox only). */
function pixCode(request: ChargeRequest): string {
  const field = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;
  const account = field('00', 'BR.GOV.BCB.PIX') + field('01', request.transactionId);
  const txid = request.transactionId.replace(/-/g, '').slice(0, 25);
  return (
    field('00', '01') +
    field('26', account) +
    field('52', '0000') +
    field('53', '986') +
    field('54', formatMoney(request.amount)) +
    field('58', 'BR') +
    field('59', 'SANDBOX SELLER') +
    field('60', 'SAO PAULO') +
    field('62', field('05', txid)) +
    '6304'
  );
}

function digitableLine(request: ChargeRequest): string {
  const digits = BigInt(`0x${createHash('sha256').update(request.transactionId).digest('hex').slice(0, 24)}`)
    .toString()
    .padEnd(33, '0')
    .slice(0, 33);
  const amount = String(request.amount).padStart(10, '0');
  return `${digits}${'9999'}${amount}`.slice(0, 47);
}

function dueDate(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}
