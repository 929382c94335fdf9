import { DataSource } from 'typeorm';
import { JobQueue } from '../../src/jobs/job-queue.service';
import type {
  BankingPort,
  DepositInstructions,
  PayoutOutcome,
  PayoutRequest,
} from '../../src/virtual-accounts/banking/banking-port';
import { DepositsRepository } from '../../src/virtual-accounts/deposits.repository';
import { DepositsService } from '../../src/virtual-accounts/deposits.service';
import { LedgerRepository } from '../../src/virtual-accounts/ledger.repository';
import { PayoutsRepository } from '../../src/virtual-accounts/payouts.repository';
import { PayoutsService } from '../../src/virtual-accounts/payouts.service';
import { createSeller, createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/** A payout port that answers what the test scripts, and remembers what it was asked. */
class FakeBank implements BankingPort {
  readonly name = 'fake';
  readonly sent: PayoutRequest[] = [];
  private answers: Array<PayoutOutcome | Error> = [];

  answer(...answers: Array<PayoutOutcome | Error>): void {
    this.answers.push(...answers);
  }

  async collect(): Promise<DepositInstructions> {
    throw new Error('bank unreachable');
  }

  async payOut(request: PayoutRequest): Promise<PayoutOutcome> {
    this.sent.push(request);
    const answer = this.answers.shift();
    if (!answer) throw new Error('FakeBank: no answer scripted');
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

/**
 * The payout service against a fake payout port, on the real database: the port's failures,
 * errors and retries, each ending with the books right. No worker runs: the test drives the job.
 */
describe('PayoutsService with a fake payout port', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: string;
  let bank: FakeBank;
  let payouts: PayoutsService;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    seller = await createSeller(t, superuser);
  });
  afterAll(() => t.close());

  beforeEach(() => {
    bank = new FakeBank();
    payouts = new PayoutsService(
      t.app.get(DataSource),
      t.app.get(LedgerRepository),
      t.app.get(PayoutsRepository),
      t.app.get(JobQueue),
      bank,
    );
  });

  const base = () => `/uniconta/seller/${seller}/virtualaccounts`;
  const balance = async (id: string) => (await t.http.get(`${base()}/${id}`, { token: superuser.access })).body.balance;
  /** A funded account and a pix transfer out of it, processing: answers the account, posting and payout id. */
  const processingTransfer = async (amount: string) => {
    const account = (await t.http.post(`/sellers/${seller}/subaccounts`, { name: 'VA' }, { token: superuser.access }))
      .body.id as string;
    await t.http.post(
      `${base()}/${account}/deposit`,
      { amount: '100.00', method: 'manual', reason: 'Service test' },
      { token: superuser.access },
    );
    const posting = (
      await t.http.post(
        `${base()}/${account}/transfer`,
        { amount, destination: { pix_key: 'ana@example.com' } },
        { token: superuser.access },
      )
    ).body;
    const payout = await t.db.query(`SELECT id FROM payouts WHERE entry_id = $1`, [posting.journal_entry]);
    return { account, posting, payoutId: payout.rows[0].id as string };
  };
  const state = async (payoutId: string) =>
    (
      await t.db.query(
        `SELECT status, failure_reason, provider_reference, reversal_entry_id IS NOT NULL AS reversed FROM payouts WHERE id = $1`,
        [payoutId],
      )
    ).rows[0];

  it('keeps the payout processing, the money reserved, while the port cannot tell the outcome; then reverses a failure once', async () => {
    const { account, posting, payoutId } = await processingTransfer('40.00');
    expect(await balance(account)).toBe('60.00');

    bank.answer(new Error('timeout'));
    await expect(payouts.process(payoutId)).rejects.toThrow('timeout');
    expect(await state(payoutId)).toEqual({
      status: 'processing',
      failure_reason: null,
      provider_reference: null,
      reversed: false,
    });
    expect(await balance(account)).toBe('60.00');

    bank.answer({ status: 'failed', reason: 'pix_key_not_found' });
    await payouts.process(payoutId);
    expect(await state(payoutId)).toEqual({
      status: 'failed',
      failure_reason: 'pix_key_not_found',
      provider_reference: null,
      reversed: true,
    });
    expect(await balance(account)).toBe('100.00');
    // The retry asked the port again with the same payout id: its idempotency key.
    expect(bank.sent.map((r) => [r.payoutId, r.amount, r.destination])).toEqual([
      [payoutId, 4000, { pix_key: 'ana@example.com' }],
      [payoutId, 4000, { pix_key: 'ana@example.com' }],
    ]);

    // A job delivered again after the outcome was recorded does nothing: no second send, no second reversal.
    await payouts.process(payoutId);
    expect(bank.sent).toHaveLength(2);
    expect(await balance(account)).toBe('100.00');
    const events = await t.db.query(
      `SELECT data FROM outbox_events WHERE type = 'virtual_account.payout.failed' AND data->>'id' = $1`,
      [posting.id],
    );
    expect(events.rows).toEqual([{ data: { ...posting, status: 'failed', failure_reason: 'pix_key_not_found' } }]);
  });

  it('sends again the payouts still processing long after they began, and settles what the port answers', async () => {
    const { account, payoutId } = await processingTransfer('30.00');
    const other = await processingTransfer('10.00');
    // Their jobs gave up (retries outlived the queue's retention): only the reconciler is left.
    bank.answer(new Error('provider down'), new Error('provider down'));
    expect(await payouts.reconcileStale(0)).toBe(0);
    expect((await state(payoutId)).status).toBe('processing');
    expect(await balance(account)).toBe('70.00');

    const sentBefore = bank.sent.length;
    expect(await payouts.reconcileStale(60)).toBe(0); // not stale yet: left to its job
    expect(bank.sent.length).toBe(sentBefore);

    bank.answer({ status: 'completed', reference: 'bank-late' }, { status: 'failed', reason: 'account_closed' });
    expect(await payouts.reconcileStale(0)).toBe(2);
    expect(await state(payoutId)).toMatchObject({ status: 'completed', provider_reference: 'bank-late' });
    expect(await state(other.payoutId)).toMatchObject({ status: 'failed', reversed: true });
    expect(await balance(other.account)).toBe('100.00');
    expect(await payouts.reconcileStale(0)).toBe(0); // nothing processing is left
  });

  it('completes a payout the port sent, keeping the money out', async () => {
    const { account, payoutId } = await processingTransfer('25.00');
    bank.answer({ status: 'completed', reference: 'bank-123' });
    await payouts.process(payoutId);
    expect(await state(payoutId)).toEqual({
      status: 'completed',
      failure_reason: null,
      provider_reference: 'bank-123',
      reversed: false,
    });
    expect(await balance(account)).toBe('75.00');
  });

  it('settles a payout once when two deliveries of its job race', async () => {
    const { account, payoutId } = await processingTransfer('10.00');
    bank.answer({ status: 'failed', reason: 'rejected' }, { status: 'failed', reason: 'rejected' });
    await Promise.all([payouts.process(payoutId), payouts.process(payoutId)]);
    expect(await state(payoutId)).toMatchObject({ status: 'failed', reversed: true });
    expect(await balance(account)).toBe('100.00');
    const reversals = await t.db.query(
      `SELECT count(*)::int AS n FROM ledger_lines WHERE account_id = $1 AND type = 'reversal'`,
      [account],
    );
    expect(reversals.rows[0].n).toBe(1);
  });

  it('writes no deposit when the bank cannot issue the payment instructions', async () => {
    const account = (await t.http.post(`/sellers/${seller}/subaccounts`, { name: 'VA' }, { token: superuser.access }))
      .body.id as string;
    const deposits = new DepositsService(
      t.app.get(DataSource),
      t.app.get(LedgerRepository),
      t.app.get(DepositsRepository),
      t.app.get(JobQueue),
      bank,
    );
    await expect(deposits.create(seller, account, { amount: '5.00' }, { superuser: false })).rejects.toThrow(
      'bank unreachable',
    );
    expect(
      (await t.db.query(`SELECT count(*)::int AS n FROM deposits WHERE account_id = $1`, [account])).rows[0].n,
    ).toBe(0);
  });
});
