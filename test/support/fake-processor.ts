import type { Client } from 'pg';
import type {
  CardData,
  CardToken,
  ChargeRequest,
  ChargeResult,
  ChargeStatus,
  PaymentProcessor,
} from '../../src/transactions/processor/payment-processor';
import { PROCESSOR_VOID_JOB } from '../../src/transactions/transactions.service';

/**
 * A processor whose behaviour each test sets: it keeps the charges it made (by idempotency
 * key) and the voids it received, so a test can tell whether the customer stays charged.
 */
export class FakeProcessor implements PaymentProcessor {
  readonly name = 'fake';
  readonly charges = new Map<string, ChargeStatus>();
  behaviour: (request: ChargeRequest) => Promise<ChargeResult> = async (request) => this.take(request);
  statusFails = false;

  charge(request: ChargeRequest): Promise<ChargeResult> {
    return this.behaviour(request);
  }

  /** Charges the customer (once per key) and answers the charge. */
  take(request: ChargeRequest): ChargeResult {
    const made: ChargeResult = { status: 'approved', reference: `fake_${request.transactionId}` };
    if (!this.charges.has(request.transactionId)) this.charges.set(request.transactionId, made);
    return made;
  }

  async chargeStatus(transactionId: string): Promise<ChargeStatus | null> {
    if (this.statusFails) throw new Error('processor unreachable');
    return this.charges.get(transactionId) ?? null;
  }

  async tokenizeCard(card: CardData): Promise<CardToken> {
    return {
      token: `fake_tok_${card.number.slice(-4)}`,
      brand: 'Visa',
      last4: card.number.slice(-4),
      expMonth: card.expMonth,
      expYear: card.expYear,
    };
  }

  async void(charge: { transactionId: string }): Promise<void> {
    const made = this.charges.get(charge.transactionId);
    if (made)
      this.charges.set(charge.transactionId, { status: 'voided', reference: made.reference ?? charge.transactionId });
  }

  /** Runs the processor-void jobs queued for the transaction, as the worker would; answers how many. */
  async runVoidJobs(db: Client, transactionId: string): Promise<number> {
    const { rows } = await db.query(`SELECT data FROM pgboss.job WHERE name = $1 AND data->>'transactionId' = $2`, [
      PROCESSOR_VOID_JOB,
      transactionId,
    ]);
    for (const { data } of rows) await this.void(data);
    return rows.length;
  }

  /** Whether the customer has a charge standing for this transaction. */
  charged(transactionId: string): boolean {
    const status = this.charges.get(transactionId)?.status;
    return status === 'approved' || status === 'pending';
  }
}

/** What a processor request that timed out throws: the charge's outcome is unknown. */
export const timeout = () => Object.assign(new Error('processor request timed out'), { code: 'ETIMEDOUT' });
