import { randomUUID } from 'node:crypto';
import { CardData, PAYMENT_PROCESSOR, PaymentProcessor } from '../../src/transactions/processor/payment-processor';
import { startTestApp, TestApp } from '../support/test-app';

describe('Sandbox processor: a card on file', () => {
  let t: TestApp;
  let processor: PaymentProcessor;

  beforeAll(async () => {
    t = await startTestApp();
    processor = t.app.get(PAYMENT_PROCESSOR);
  });
  afterAll(() => t.close());

  const card = (expMonth: number, expYear: number): CardData => ({
    number: '4111111111111111',
    holderName: 'ANA SOUZA',
    cvv: '123',
    expMonth,
    expYear,
  });
  const chargeOnFile = async (cardToken: string) =>
    processor.charge({ transactionId: randomUUID(), amount: 1000, paymentType: 'credit', installments: 1, cardToken });

  it('is charged until it expires, and declined expired_card after (the month boundary: card.spec.ts)', async () => {
    const year = new Date().getUTCFullYear();
    const current = await processor.tokenizeCard(card(12, year + 1));
    const expired = await processor.tokenizeCard(card(12, year - 2));
    const stored = await t.db.query('SELECT exp_month, exp_year FROM sandbox_card_tokens WHERE token = $1', [
      expired.token,
    ]);
    expect(stored.rows).toEqual([{ exp_month: 12, exp_year: year - 2 }]);

    expect(await chargeOnFile(current.token)).toMatchObject({ status: 'approved' });
    expect(await chargeOnFile(expired.token)).toMatchObject({ status: 'declined', declineReason: 'expired_card' });
    expect(await chargeOnFile('tok_sbx_unknown')).toMatchObject({
      status: 'declined',
      declineReason: 'invalid_card_token',
    });
  });
});
