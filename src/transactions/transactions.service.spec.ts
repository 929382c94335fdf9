import type { FastifyRequest } from 'fastify';
import { DataSource, EntityManager } from 'typeorm';
import { brasiliaDate, brasiliaDayEnd } from '../../test/support/brasilia';
import { createUser, TestUser } from '../../test/support/identity';
import { CARDS, payingSeller } from '../../test/support/payments';
import { startTestApp, TestApp } from '../../test/support/test-app';
import { AuthorizationService } from '../auth/authorization.service';
import { runInRequestContext } from '../common/context/request-context';
import { attachClaim, IdempotencyClaim } from '../common/idempotency/request-transaction';
import { JobQueue } from '../jobs/job-queue.service';
import { SellersService } from '../sellers/sellers.service';
import { SplitService } from '../split/split.service';
import type { CreateTransactionDto, TransactionResponseDto } from './dto/transaction.dto';
import { FakeProcessor, timeout } from '../../test/support/fake-processor';
import type { ChargeRequest, ChargeResult } from './processor/payment-processor';
import { TransactionSettlements } from './transaction-settlements';
import { TransactionsService } from './transactions.service';
import { TransactionsRepository } from './transactions.repository';

describe('TransactionsService with a processor whose outcome is unknown', () => {
  let t: TestApp;
  let superuser: TestUser;
  let sellerId: string;
  let processor: FakeProcessor;
  let service: TransactionsService;
  let notified: Array<{ id: string; status: string; previous: string }>;
  /** What the settlement throws (the database failing while it records an answer); null: nothing. */
  let settlementFails: Error | null;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    sellerId = (await payingSeller(t, superuser)).sellerId;
  });
  afterAll(() => t.close());

  beforeEach(() => {
    processor = new FakeProcessor();
    notified = [];
    settlementFails = null;
    const settlements = new TransactionSettlements();
    settlements.subscribe({
      async onTransactionSettled(_manager: EntityManager, tx: TransactionResponseDto, previous: string) {
        if (settlementFails) throw settlementFails;
        notified.push({ id: tx.id, status: tx.status, previous });
      },
    });
    service = new TransactionsService(
      t.app.get(DataSource),
      t.app.get(TransactionsRepository),
      t.app.get(SellersService),
      t.app.get(SplitService),
      processor,
      t.app.get(AuthorizationService),
      t.app.get(JobQueue),
      settlements,
    );
  });

  const card: CreateTransactionDto = { amount: '25.00', payment_type: 'credit', card: CARDS.visa };
  const stored = async (id: string) =>
    (await t.db.query('SELECT status, void_reason, processor_reference FROM transactions WHERE id = $1', [id])).rows[0];
  const events = async (id: string) =>
    (await t.db.query(`SELECT type, data FROM outbox_events WHERE data->>'id' = $1 ORDER BY seq`, [id])).rows.map(
      (r: { type: string }) => r.type,
    );
  const runVoidJobs = (id: string) => processor.runVoidJobs(t.db, id);
  const reconcile = () => service.reconcileInterrupted(0);
  /** The id of the pending transaction with this description, once the service has written it. */
  const pendingNamed = async (description: string): Promise<string> => {
    for (;;) {
      const { rows } = await t.db.query(`SELECT id FROM transactions WHERE description = $1 AND status = 'pending'`, [
        description,
      ]);
      if (rows.length > 0) return rows[0].id;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** Starts a card charge the processor answers (as `answerWith` says) only when the test calls `answer`. */
  const chargeAnsweredLater = async (
    answerWith: (request: ChargeRequest) => ChargeResult = (r) => processor.take(r),
  ) => {
    let answer!: () => void;
    processor.behaviour = (request) =>
      new Promise<ChargeResult>((resolve) => {
        answer = () => resolve(answerWith(request));
      });
    const creating = service.create(sellerId, { ...card, description: expect.getState().currentTestName });
    const id = await pendingNamed(expect.getState().currentTestName!);
    return { id, creating, answer: () => answer() };
  };

  it('a timeout leaves the charge pending, and the reconciler voids what the processor never received', async () => {
    processor.behaviour = async () => {
      throw timeout();
    };
    const answered = await service.create(sellerId, card);
    expect(answered.status).toBe('pending');
    expect(await stored(answered.id)).toMatchObject({ status: 'pending', processor_reference: null });

    expect(await reconcile()).toBeGreaterThanOrEqual(1);
    expect(await stored(answered.id)).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });
    expect(await runVoidJobs(answered.id)).toBe(1);
    expect(processor.charged(answered.id)).toBe(false);
    // Never announced by a first answer: announced with its void, so no consumer hears of a void alone.
    expect(await events(answered.id)).toEqual(['transaction.created', 'transaction.voided']);
    expect(notified).toEqual([{ id: answered.id, status: 'voided', previous: 'pending' }]);
  });

  it('an error after the processor charged leaves it pending, and the reconciler records the charge', async () => {
    processor.behaviour = async (request) => {
      processor.take(request);
      throw new Error('connection reset after the charge');
    };
    const answered = await service.create(sellerId, card);
    expect(answered.status).toBe('pending');
    expect(await stored(answered.id)).toMatchObject({ status: 'pending' });

    await reconcile();
    expect(await stored(answered.id)).toMatchObject({
      status: 'approved',
      processor_reference: `fake_${answered.id}`,
    });
    expect(await runVoidJobs(answered.id)).toBe(0);
    expect(processor.charged(answered.id)).toBe(true); // charged, and the seller's books show it
    expect(await events(answered.id)).toEqual(['transaction.created', 'transaction.approved']);
    expect(notified).toEqual([{ id: answered.id, status: 'approved', previous: 'pending' }]);
  });

  it('a card charge the processor answers pending (under review) is recorded as it decides: approved or declined', async () => {
    const underReview = (request: ChargeRequest): ChargeResult => {
      const answer = { status: 'pending' as const, reference: `fake_${request.transactionId}` };
      processor.charges.set(request.transactionId, answer);
      return answer;
    };
    processor.behaviour = async (request) => underReview(request);
    const approving = await service.create(sellerId, card);
    const declining = await service.create(sellerId, card);
    expect([approving.status, declining.status]).toEqual(['pending', 'pending']);

    // Still under review: nothing changes, and the reconciler says it resolved nothing.
    expect(await reconcile()).toBe(0);
    expect(await stored(approving.id)).toMatchObject({
      status: 'pending',
      processor_reference: `fake_${approving.id}`,
    });

    processor.charges.set(approving.id, { status: 'approved', reference: `fake_${approving.id}` });
    processor.charges.set(declining.id, {
      status: 'declined',
      reference: `fake_${declining.id}`,
      declineReason: 'fraud_suspected',
    });
    expect(await reconcile()).toBe(2);
    expect(await stored(approving.id)).toMatchObject({ status: 'approved' });
    expect(await stored(declining.id)).toMatchObject({ status: 'declined' });
    const detail = await t.http.get(`/unified/accounts/sellers/${sellerId}/transactions/${declining.id}`, {
      token: superuser.access,
    });
    expect(detail.body).toMatchObject({ status: 'declined', decline_reason: 'fraud_suspected' });
    expect(await events(approving.id)).toEqual(['transaction.created', 'transaction.approved']);
    expect(await events(declining.id)).toEqual(['transaction.created', 'transaction.declined']);
    expect(notified.filter((n) => n.status !== 'pending')).toEqual([
      { id: approving.id, status: 'approved', previous: 'pending' },
      { id: declining.id, status: 'declined', previous: 'pending' },
    ]);
    expect(await runVoidJobs(approving.id)).toBe(0);

    // Decided once: the reconciler no longer picks them up, and a repeated answer changes nothing.
    expect(await reconcile()).toBe(0);
    expect(await events(approving.id)).toEqual(['transaction.created', 'transaction.approved']);
  });

  it('a pix charge whose instructions were lost gets them from the reconciler, and waits for its payment', async () => {
    const instructions = { qr_code: 'qr', expires_at: '2031-01-01T00:00:00Z' };
    processor.behaviour = async (request) => {
      processor.charges.set(request.transactionId, {
        status: 'pending',
        reference: `fake_${request.transactionId}`,
        pix: instructions,
      });
      throw timeout();
    };
    const answered = await service.create(sellerId, { amount: '25.00', payment_type: 'pix' });
    expect(await stored(answered.id)).toMatchObject({ status: 'pending', processor_reference: null });

    expect(await reconcile()).toBeGreaterThanOrEqual(1);
    expect(await stored(answered.id)).toMatchObject({ status: 'pending', processor_reference: `fake_${answered.id}` });
    expect((await service.get(sellerId, answered.id)).pix).toEqual(instructions);
    expect(await events(answered.id)).toEqual(['transaction.created']);
    expect(notified).toEqual([{ id: answered.id, status: 'pending', previous: 'pending' }]);
    await reconcile(); // instructions recorded: no longer unresolved
    expect(notified).toHaveLength(1);
  });

  it('a boleto charge the processor never received is voided by the reconciler (nothing waits for it)', async () => {
    processor.behaviour = async () => {
      throw timeout();
    };
    const answered = await service.create(sellerId, {
      amount: '25.00',
      payment_type: 'boleto',
      customer: { name: 'Ana Souza', document: '52998224725' },
    });
    expect(await stored(answered.id)).toMatchObject({ status: 'pending', processor_reference: null });
    expect(await reconcile()).toBeGreaterThanOrEqual(1);
    expect(await stored(answered.id)).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });
    expect(await events(answered.id)).toEqual(['transaction.created', 'transaction.voided']);
  });

  it('an answer arriving after the reconciler voided the charge is undone at the processor', async () => {
    const { id, creating, answer } = await chargeAnsweredLater();
    await reconcile(); // the processor has not charged yet: the reconciler gives the charge up
    expect(await stored(id)).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });

    answer(); // ... and then the processor charges and answers
    const answered = await creating;
    expect(answered).toMatchObject({ id, status: 'voided' });
    expect(await stored(id)).toMatchObject({ status: 'voided' });
    // The void awaited now is the late charge's: the first one's acknowledgement does not stand for it.
    const jobs = await t.db.query(`SELECT data FROM pgboss.job WHERE data->>'transactionId' = $1 ORDER BY created_on`, [
      id,
    ]);
    const awaited = await t.db.query('SELECT processor_void_token FROM transactions WHERE id = $1', [id]);
    expect(awaited.rows[0].processor_void_token).toBe(jobs.rows[1].data.token);
    expect(await runVoidJobs(id)).toBe(2); // the reconciler's void, and the late charge's
    expect(processor.charged(id)).toBe(false);
    expect(await events(id)).toEqual(['transaction.created', 'transaction.voided']);
  });

  it('a late decline after the reconciler voided the charge asks nothing more of the processor', async () => {
    const { id, creating, answer } = await chargeAnsweredLater((request) => ({
      status: 'declined',
      reference: `fake_${request.transactionId}`,
      declineReason: 'x',
    }));
    await reconcile();
    answer();
    expect(await creating).toMatchObject({ id, status: 'voided' });
    expect(await runVoidJobs(id)).toBe(1); // the reconciler's only
  });

  it("refuses to confirm a pending card charge (its outcome is the processor's), and confirms a pix one", async () => {
    processor.behaviour = async () => {
      throw timeout();
    };
    const charge = await service.create(sellerId, card);
    const refused = await service.approvePending(charge.id).then(
      () => undefined,
      (e: { status: number; code: string }) => ({ status: e.status, code: e.code }),
    );
    expect(refused).toEqual({ status: 409, code: 'invalid_state' });
    expect(await stored(charge.id)).toMatchObject({ status: 'pending' });
    expect(notified).toEqual([]);

    processor.behaviour = async (request) => ({ status: 'pending', reference: `fake_${request.transactionId}` });
    const pix = await service.create(sellerId, { amount: '10.00', payment_type: 'pix' });
    expect(await service.approvePending(pix.id)).toMatchObject({ id: pix.id, status: 'approved' });
  });

  it('a card charge the seller voids while the processor is answering is announced with its void, and undone there', async () => {
    const { id, creating, answer } = await chargeAnsweredLater();
    expect(await service.void(sellerId, id, 'changed my mind')).toMatchObject({ id, status: 'voided' });
    const outbox = await t.db.query(`SELECT type, data FROM outbox_events WHERE data->>'id' = $1 ORDER BY seq`, [id]);
    expect(outbox.rows.map((r: { type: string; data: { status: string } }) => [r.type, r.data.status])).toEqual([
      ['transaction.created', 'pending'],
      ['transaction.voided', 'voided'],
    ]);

    answer();
    expect(await creating).toMatchObject({ id, status: 'voided' });
    expect(await runVoidJobs(id)).toBe(2); // the seller's void, and the late charge's
    expect(processor.charged(id)).toBe(false);
    expect(await events(id)).toEqual(['transaction.created', 'transaction.voided']);
  });

  describe('the window to pay a pix or boleto charge', () => {
    const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * 60_000);
    const pixUntil = (until: Date) =>
      (processor.behaviour = async (request) => ({
        status: 'pending',
        reference: `fake_${request.transactionId}`,
        pix: { qr_code: 'qr', expires_at: until.toISOString() },
      }));
    const boletoDue = (dueDate: string) =>
      (processor.behaviour = async (request) => ({
        status: 'pending',
        reference: `fake_${request.transactionId}`,
        boleto: { digitable_line: '0'.repeat(47), due_date: dueDate },
      }));
    const refusal = (id: string) =>
      service.approvePending(id).then(
        () => undefined,
        (e: { status: number; code: string; message: string }) => ({
          status: e.status,
          code: e.code,
          message: e.message,
        }),
      );

    const boleto: CreateTransactionDto = {
      amount: '25.00',
      payment_type: 'boleto',
      customer: { name: 'Ana Souza', document: '52998224725' },
    };

    it('a pix charge cannot be paid after its expires_at: confirmation refused, the expiry job voids it', async () => {
      pixUntil(minutesFromNow(-1));
      const late = await service.create(sellerId, { amount: '10.00', payment_type: 'pix' });
      pixUntil(minutesFromNow(30));
      const open = await service.create(sellerId, { amount: '10.00', payment_type: 'pix' });

      expect(await refusal(late.id)).toEqual({
        status: 409,
        code: 'invalid_state',
        message: expect.stringMatching(/could be paid until .*; it can no longer be paid/),
      });
      expect(await stored(late.id)).toMatchObject({ status: 'pending' });

      expect(await service.expireUnpaid(new Date())).toBeGreaterThanOrEqual(1);
      expect(await stored(late.id)).toMatchObject({ status: 'voided', void_reason: 'payment_expired' });
      expect(await stored(open.id)).toMatchObject({ status: 'pending' });
      expect(await events(late.id)).toEqual(['transaction.created', 'transaction.voided']);
      expect(await runVoidJobs(late.id)).toBe(1); // the code is withdrawn at the processor too
      expect(processor.charged(late.id)).toBe(false);
      expect(notified).toContainEqual({ id: late.id, status: 'voided', previous: 'pending' });

      // Inside its window, the other one is paid.
      expect(await service.approvePending(open.id)).toMatchObject({ status: 'approved' });
      expect(await service.expireUnpaid(minutesFromNow(60))).toBe(0);
    });

    it('a boleto can be paid until the end of its due date in Brasília, then it expires', async () => {
      const today = brasiliaDate(new Date());
      boletoDue(today);
      const dueToday = await service.create(sellerId, boleto);
      boletoDue(brasiliaDate(minutesFromNow(-24 * 60)));
      const dueYesterday = await service.create(sellerId, boleto);

      expect(await refusal(dueYesterday.id)).toMatchObject({ status: 409, code: 'invalid_state' });
      expect(await service.approvePending(dueToday.id)).toMatchObject({ status: 'approved' });

      boletoDue(today);
      const unpaid = await service.create(sellerId, boleto);
      const endOfToday = brasiliaDayEnd(today);
      await service.expireUnpaid(new Date(endOfToday.getTime() - 1));
      expect(await stored(unpaid.id)).toMatchObject({ status: 'pending' });
      await service.expireUnpaid(endOfToday);
      expect(await stored(unpaid.id)).toMatchObject({ status: 'voided', void_reason: 'payment_expired' });
      expect(await stored(dueToday.id)).toMatchObject({ status: 'approved' }); // paid: never expired
    });

    it("leaves a checkout's or a subscription's charge to them (they expire it), but refuses its late payment", async () => {
      pixUntil(minutesFromNow(-1));
      const checkout = await service.create(sellerId, { amount: '10.00', payment_type: 'pix' }, 'event_checkout');
      await service.expireUnpaid(new Date());
      expect(await stored(checkout.id)).toMatchObject({ status: 'pending' });
      expect(await refusal(checkout.id)).toMatchObject({ status: 409, code: 'invalid_state' });
    });
  });

  it('sends a void again when the processor has not acknowledged it (its job lost or out of retries)', async () => {
    const charge = await service.create(sellerId, card);
    await service.void(sellerId, charge.id);
    const awaited = async () =>
      (await t.db.query('SELECT processor_void_token FROM transactions WHERE id = $1', [charge.id])).rows[0]
        .processor_void_token;
    const acknowledged = async () => (await awaited()) === null;
    const queued = await t.db.query(`SELECT data FROM pgboss.job WHERE data->>'transactionId' = $1`, [charge.id]);
    expect(queued.rows.map((r: { data: { token: string } }) => r.data.token)).toEqual([await awaited()]);
    expect(await acknowledged()).toBe(false);
    // The void job never ran: the customer is still charged.
    expect(processor.charged(charge.id)).toBe(true);

    const voidOf = processor.void.bind(processor);
    processor.void = async () => {
      throw timeout();
    };
    await service.resendUnacknowledgedVoids(0);
    expect(await acknowledged()).toBe(false); // the processor did not answer: sent again next run

    processor.void = voidOf;
    expect(await service.resendUnacknowledgedVoids(60)).toBe(0); // too recent for the sweep
    expect(await service.resendUnacknowledgedVoids(0)).toBeGreaterThanOrEqual(1);
    expect(processor.charged(charge.id)).toBe(false);
    expect(await acknowledged()).toBe(true);
  });

  it('answers a failure, not pending, when recording the answer failed for a reason that will not pass, or for a checkout', async () => {
    settlementFails = new TypeError("Cannot read properties of undefined (reading 'id')");
    await expect(service.create(sellerId, card)).rejects.toThrow(TypeError);
    // A checkout's own records were handed over inside the rolled-back settlement: its request answers the error.
    settlementFails = Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });
    await expect(service.create(sellerId, card, 'event_checkout')).rejects.toThrow('lock timeout');
  });

  it('answers pending, not an error, when the processor charged but the answer cannot be recorded now', async () => {
    settlementFails = Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });
    const answered = await service.create(sellerId, card);
    expect(answered.status).toBe('pending');
    expect(processor.charged(answered.id)).toBe(true);
    expect(await stored(answered.id)).toMatchObject({ status: 'pending', processor_reference: null });
    expect(await events(answered.id)).toEqual([]); // nothing half-written

    settlementFails = null;
    await reconcile();
    expect(await stored(answered.id)).toMatchObject({ status: 'approved', processor_reference: `fake_${answered.id}` });
    expect(await events(answered.id)).toEqual(['transaction.created', 'transaction.approved']);
  });

  it('leaves a charge pending while the processor cannot say what became of it', async () => {
    processor.behaviour = async () => {
      throw timeout();
    };
    const answered = await service.create(sellerId, card);
    processor.statusFails = true;
    await reconcile();
    expect(await stored(answered.id)).toMatchObject({ status: 'pending' });
    processor.statusFails = false;
    await reconcile();
    expect(await stored(answered.id)).toMatchObject({ status: 'voided' });
  });

  it('asks about every interrupted charge at each run: many the processor has not decided hold up none behind them', async () => {
    processor.behaviour = async (request) => {
      const answer = { status: 'pending' as const, reference: `fake_${request.transactionId}` };
      processor.charges.set(request.transactionId, answer);
      return answer;
    };
    const underReview = await service.create(sellerId, card);
    // 600 more under review, older than it: more than the 500 a run once took, oldest first.
    const { rows: columns } = await t.db.query(
      `SELECT column_name FROM information_schema.columns
        WHERE table_name = 'transactions' AND table_schema = current_schema() AND is_identity = 'NO'`,
    );
    const copied: Record<string, string> = {
      id: 'g.id',
      created_at: `t.created_at - g.n * interval '1 second'`,
      processor_reference: `'fake_' || g.id`,
    };
    const names = columns.map((c: { column_name: string }) => c.column_name);
    const { rows: copies } = await t.db.query(
      `INSERT INTO transactions (${names.join(', ')})
       SELECT ${names.map((name: string) => copied[name] ?? `t.${name}`).join(', ')}
         FROM transactions t, (SELECT gen_random_uuid() AS id, n FROM generate_series(1, 600) n) g
        WHERE t.id = $1
       RETURNING id`,
      [underReview.id],
    );
    const ids: string[] = copies.map((c: { id: string }) => c.id);
    for (const id of ids) processor.charges.set(id, { status: 'pending', reference: `fake_${id}` });
    // The newest, which the processor never received.
    processor.behaviour = async () => {
      throw timeout();
    };
    const interrupted = await service.create(sellerId, card);
    try {
      expect(await reconcile()).toBe(1);
      expect(await stored(interrupted.id)).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });
      expect(await stored(underReview.id)).toMatchObject({ status: 'pending' });
    } finally {
      await t.db.query('DELETE FROM transactions WHERE id = ANY($1::uuid[])', [[...ids, underReview.id]]);
    }
  });

  it('a reconciler run out of time stops, and the next run goes on after the last charge it asked about', async () => {
    await reconcile(); // charges left unresolved by earlier tests: this processor never received them
    processor.behaviour = async (request) => {
      const answer = { status: 'pending' as const, reference: `fake_${request.transactionId}` };
      processor.charges.set(request.transactionId, answer);
      return answer;
    };
    const underReview = await service.create(sellerId, card);
    processor.behaviour = async () => {
      throw timeout();
    };
    const interrupted = await service.create(sellerId, card);

    // No time at all: one charge per run, the oldest first.
    expect(await service.reconcileInterrupted(0, 0)).toBe(0);
    expect(await stored(interrupted.id)).toMatchObject({ status: 'pending' });
    // Not the oldest again, which the processor still has under review: the one after it.
    expect(await service.reconcileInterrupted(0, 0)).toBe(1);
    expect(await stored(interrupted.id)).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });
    expect(await stored(underReview.id)).toMatchObject({ status: 'pending' });

    processor.charges.set(underReview.id, { status: 'approved', reference: `fake_${underReview.id}` });
    // Past the newest: the next run starts from the oldest again.
    expect(await service.reconcileInterrupted(0, 0)).toBe(0);
    expect(await service.reconcileInterrupted(0, 0)).toBe(1);
    expect(await stored(underReview.id)).toMatchObject({ status: 'approved' });
  });

  it('records a declined charge as declined, and an approved one as approved, with the GET view as event data', async () => {
    const approved = await service.create(sellerId, card);
    expect(approved.status).toBe('approved');
    const detail = await t.http.get(`/unified/accounts/sellers/${sellerId}/transactions/${approved.id}`, {
      token: superuser.access,
    });
    const { rows } = await t.db.query(
      `SELECT data FROM outbox_events WHERE type = 'transaction.approved' AND data->>'id' = $1`,
      [approved.id],
    );
    expect(rows[0].data).toEqual(detail.body);

    processor.behaviour = async (request) => ({
      status: 'declined',
      reference: `fake_${request.transactionId}`,
      declineReason: 'insufficient_funds',
    });
    const declined = await service.create(sellerId, card);
    expect(declined).toMatchObject({ status: 'declined', decline_reason: 'insufficient_funds' });
  });

  it('charges a card on file by its token under the charge rules without a card; refuses a card too, pix and bad fields', async () => {
    const requests: ChargeRequest[] = [];
    processor.behaviour = async (request) => {
      requests.push(request);
      return processor.take(request);
    };
    const onFile = await service.tokenizeCard(CARDS.visa);
    const byToken = { amount: '49.90', payment_type: 'credit' as const, description: 'renewal' };
    const charged = await service.create(sellerId, byToken, 'subscription', { cardOnFile: onFile });
    expect(charged).toMatchObject({
      status: 'approved',
      card_brand: 'Visa',
      card_last4: '1111',
      source: 'subscription',
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ cardToken: onFile.token, paymentType: 'credit' });
    expect(requests[0].card).toBeUndefined();

    const refused = (input: CreateTransactionDto) =>
      service.create(sellerId, input, 'subscription', { cardOnFile: onFile }).then(
        () => undefined,
        (error: { status: number; errors: unknown }) => ({ status: error.status, errors: error.errors }),
      );
    expect(await refused({ ...byToken, card: CARDS.visa })).toEqual({
      status: 400,
      errors: { card: ['should not exist'] },
    });
    expect(await refused({ ...byToken, payment_type: 'pix' })).toEqual({
      status: 400,
      errors: { payment_type: ['must be credit or debit for a card on file'] },
    });
    expect(await refused({ ...byToken, amount: '1.999', installments: 0 })).toMatchObject({
      status: 400,
      errors: { amount: expect.any(Array), installments: expect.any(Array) },
    });
    expect(requests).toHaveLength(1);
  });

  it('tokenizes only a card that passes CardDto rules, with the field paths of its problems', async () => {
    const error = await service.tokenizeCard({ ...CARDS.visa, number: '4111111111111112', exp_year: 2001 }).then(
      () => undefined,
      (e: { status: number; errors: unknown }) => ({ status: e.status, errors: e.errors }),
    );
    expect(error).toEqual({
      status: 400,
      errors: { number: ['is not a valid card number'], exp_year: ['must not be past: the card has expired'] },
    });
  });

  it("answers the request's Idempotency-Key only for a charge asked through the API", async () => {
    const request = {} as FastifyRequest;
    const claim: IdempotencyClaim = {
      resumeOf: null,
      answered: false,
      provisional: false,
      answer: jest.fn(async () => undefined),
      tie: jest.fn(async () => undefined),
    };
    attachClaim(request, claim);
    const inRequest = <T>(work: () => Promise<T>) => runInRequestContext({ requestId: 'r1', ip: '::1', request }, work);

    const onBehalf = await inRequest(() => service.create(sellerId, card, 'event_checkout'));
    expect(onBehalf.status).toBe('approved');
    expect(claim.tie).not.toHaveBeenCalled();
    expect(claim.answer).not.toHaveBeenCalled();

    const asked = await inRequest(() => service.create(sellerId, card));
    expect(claim.tie).toHaveBeenCalledWith(expect.anything(), asked.id);
    expect(claim.answer).toHaveBeenCalledWith(expect.anything(), asked);
    expect(claim.answered).toBe(true);
  });

  it("writes the caller's records alongside the pending charge: a failure of theirs leaves no charge, and the processor never hears of it", async () => {
    let asked = 0;
    processor.behaviour = async (request) => {
      asked++;
      return processor.take(request);
    };
    const description = expect.getState().currentTestName!.slice(0, 200);
    const refused = service.create(sellerId, { ...card, description }, 'event_checkout', {
      alongside: async (manager, transactionId) => {
        await manager.query('SELECT $1::uuid', [transactionId]);
        await manager.query('SELECT 1/0');
      },
    });
    await expect(refused).rejects.toThrow('division by zero');
    expect(asked).toBe(0);
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM transactions WHERE description = $1', [
      description,
    ]);
    expect(rows[0].n).toBe(0);

    let written: string | null = null;
    const charged = await service.create(sellerId, { ...card, description }, 'event_checkout', {
      alongside: async (_manager, transactionId) => {
        written = transactionId;
      },
    });
    expect(written).toBe(charged.id);
    expect(charged.status).toBe('approved');
    expect(asked).toBe(1);
  });
});
