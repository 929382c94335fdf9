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

  it('is charged through the month it expires in (UTC), and declined expired_card after', async () => {
    const now = new Date();
    const month = now.getUTCMonth() + 1;
    const year = now.getUTCFullYear();
    const lastMonth = month === 1 ? { month: 12, year: year - 1 } : { month: month - 1, year };

    const current = await processor.tokenizeCard(card(month, year));
    const expired = await processor.tokenizeCard(card(lastMonth.month, lastMonth.year));
    const stored = await t.db.query('SELECT exp_month, exp_year FROM sandbox_card_tokens WHERE token = $1', [
      expired.token,
    ]);
    expect(stored.rows).toEqual([{ exp_month: lastMonth.month, exp_year: lastMonth.year }]);

    expect(await chargeOnFile(current.token)).toMatchObject({ status: 'approved' });
    expect(await chargeOnFile(expired.token)).toMatchObject({ status: 'declined', declineReason: 'expired_card' });
    expect(await chargeOnFile('tok_sbx_unknown')).toMatchObject({
      status: 'declined',
      declineReason: 'invalid_card_token',
    });
  });
});
