import * as classValidator from 'class-validator';
import { Client } from 'pg';
import { CheckoutService } from '../../src/events/checkout.service';
import { TicketedEventsRepository } from '../../src/events/ticketed-events.repository';
import { TransactionsService } from '../../src/transactions/transactions.service';
import { cliProcess } from '../support/cli-process';
import { createUser, TestUser } from '../support/identity';
import { CARDS, PayingSeller, payingSeller } from '../support/payments';
import { newTestService } from '../support/service-test';
import { TestSmtpServer } from '../support/smtp';
import { startTestApp, TestApp } from '../support/test-app';
import { addDays, brasiliaDate, brasiliaDayEnd } from '../support/brasilia';
import { checkoutBody, eventBody, publishedEvent } from '../support/ticketed-events';
import { eventually } from '../support/webhook-receiver';

const CODE = /^[2-9A-HJ-NP-Z]{5}(-[2-9A-HJ-NP-Z]{5}){3}$/;

/** Ticketed events and the public checkout (API.md section 10.1), over HTTP, real PostgreSQL and SMTP. */
describe('ticketed events and checkout', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let superuser: TestUser;
  let seller: PayingSeller;
  let ip = 0;
  /** Each checkout comes from its own client address, so the public rate limit stays out of the way. */
  const from = () => ({ 'x-forwarded-for': `198.51.100.${++ip % 250}` });

  beforeAll(async () => {
    smtp = new TestSmtpServer();
    await smtp.start();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: 'true' }, runWorkers: true });
    superuser = await createUser(t, { superuser: true });
    seller = await payingSeller(t, superuser);
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const newEvent = (overrides: Record<string, unknown> = {}) =>
    publishedEvent(t.http, superuser.access, seller.sellerId, overrides);
  const checkout = (eventId: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http.post(`/event/event/${eventId}/checkout/`, body, { headers: { ...from(), ...headers } });
  const seats = async (eventId: string) => {
    const { rows } = await t.db.query(
      'SELECT name, quantity, sold, held FROM ticket_types WHERE event_id = $1 ORDER BY seq',
      [eventId],
    );
    return Object.fromEntries(rows.map((r) => [r.name, { quantity: r.quantity, sold: r.sold, held: r.held }]));
  };
  const outbox = async (type: string, orderId: string) =>
    (await t.db.query(`SELECT data FROM outbox_events WHERE type = $1 AND data->>'id' = $2`, [type, orderId])).rows;
  const orderCount = async () => Number((await t.db.query('SELECT count(*) FROM event_orders')).rows[0].count);
  const checkoutCharges = async () =>
    Number((await t.db.query(`SELECT count(*) FROM transactions WHERE source = 'event_checkout'`)).rows[0].count);
  /**
   * A card checkout of 1 seat of `ticketType` while another buyer's transaction holds 2 of its
   * seats: the checkout's hold waits for that row lock, then the other buyer commits. Answers
   * the checkout's response.
   */
  const checkoutBehindAnotherHold = async (eventId: string, ticketType: string) => {
    const other = new Client({ connectionString: t.databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('UPDATE ticket_types SET held = held + 2 WHERE id = $1', [ticketType]);
      const pending = checkout(
        eventId,
        checkoutBody([{ ticket_type: ticketType, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
      );
      await eventually(async () => {
        const { rows } = await t.db.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE NOT l.granted AND a.datname = current_database()`,
        );
        return rows[0].n > 0;
      });
      await other.query('COMMIT');
      return await pending;
    } finally {
      await other.end();
    }
  };

  it('card paid: seats sold, one ticket per seat, the transaction is a normal one of the seller, tickets e-mailed', async () => {
    const event = await newEvent();
    const [pista, vip] = event.ticket_types;
    const since = smtp.received.length;
    const res = await checkout(
      event.id,
      checkoutBody(
        [
          { ticket_type: pista.id, quantity: 3 },
          { ticket_type: vip.id, quantity: 1 },
        ],
        { type: 'credit', installments: 1, card: CARDS.visa },
        { email: 'paid@example.com' },
      ),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'paid', amount: '550.00', payment_type: 'credit', pix: null });
    expect(res.body.buyer).toEqual({ name: 'Ana Souza', email: 'p***@example.com' });
    expect(res.body.tickets).toHaveLength(4);
    for (const ticket of res.body.tickets) expect(ticket.code).toMatch(CODE);
    expect(new Set(res.body.tickets.map((x: { code: string }) => x.code)).size).toBe(4);
    expect(res.body.tickets.filter((x: { ticket_type: string }) => x.ticket_type === vip.id)).toHaveLength(1);
    expect(await seats(event.id)).toEqual({
      Pista: { quantity: 10, sold: 3, held: 0 },
      VIP: { quantity: 2, sold: 1, held: 0 },
    });

    const tx = await t.http.get(`/unified/accounts/sellers/${seller.sellerId}/transactions/${res.body.transaction}`, {
      token: superuser.access,
    });
    expect(tx.body).toMatchObject({
      amount: '550.00',
      status: 'approved',
      source: 'event_checkout',
      entry_mode: 'online',
      installments: 1,
      card_last4: '1111',
      reference: res.body.id,
      rate_plan: seller.ratePlanId,
      split_plan: seller.splitPlanId,
    });
    // Fees and split resolved by the seller's plans exactly as for a charge made through the API.
    const direct = await t.http.post(
      `/unified/accounts/sellers/${seller.sellerId}/transactions/`,
      { amount: '550.00', payment_type: 'credit', installments: 1, card: CARDS.visa },
      { token: superuser.access },
    );
    expect(tx.body.fees).toEqual(direct.body.fees);
    expect(tx.body.split).toEqual(direct.body.split);
    expect(tx.body.split.shares.length).toBeGreaterThan(0);
    const listed = await t.http.get(
      `/unified/accounts/sellers/${seller.sellerId}/transactions/?source=event_checkout&reference=${res.body.id}`,
      { token: superuser.access },
    );
    expect(listed.body.results.map((x: { id: string }) => x.id)).toEqual([res.body.transaction]);

    const publicView = await t.http.get(`/event/event/${event.id}/`);
    expect(publicView.body.ticket_types.map((x: { available: number }) => x.available)).toEqual([7, 1]);

    const [completed] = await outbox('checkout.completed', res.body.id);
    expect(completed.data).toMatchObject({ id: res.body.id, status: 'paid', buyer: { email: 'paid@example.com' } });
    expect(completed.data.tickets).toHaveLength(4);
    // Webhook consumers hear of the charge before of the order it paid.
    const { rows: order } = await t.db.query(
      `SELECT type FROM outbox_events WHERE data->>'id' = ANY($1::text[]) ORDER BY seq`,
      [[res.body.id, res.body.transaction]],
    );
    expect(order.map((row) => row.type)).toEqual(['transaction.created', 'transaction.approved', 'checkout.completed']);

    const mail = await smtp.waitForMail('paid@example.com', since);
    const text = mail.raw.replace(/=\r?\n/g, '');
    expect(text).toContain('Festival de Ver');
    for (const ticket of res.body.tickets) expect(text).toContain(ticket.code);

    // No card data anywhere in the database.
    const { rows } = await t.db.query(
      `SELECT (SELECT count(*) FROM transactions WHERE row_to_json(transactions)::text LIKE '%4111111111111111%')
            + (SELECT count(*) FROM event_orders WHERE row_to_json(event_orders)::text LIKE '%4111111111111111%')
            + (SELECT count(*) FROM idempotency_keys WHERE row_to_json(idempotency_keys)::text LIKE '%4111111111111111%')
            + (SELECT count(*) FROM outbox_events WHERE data::text LIKE '%4111111111111111%') AS n`,
    );
    expect(Number(rows[0].n)).toBe(0);
  });

  it("a checkout checks its body once and its charge once (the transactions service takes the checkout's check)", async () => {
    const event = await newEvent();
    const validate = jest.spyOn(classValidator, 'validate');
    try {
      const res = await checkout(
        event.id,
        checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
      );
      expect(res.status).toBe(201);
      const checked = validate.mock.calls.map(([target]) => (target as unknown as object).constructor.name);
      expect(checked.sort()).toEqual(['CheckoutDto', 'CreateTransactionDto']);
    } finally {
      validate.mockRestore();
    }
  });

  it('card declined: the order is declined, no ticket, and its seats are back on sale', async () => {
    const event = await newEvent();
    const [, vip] = event.ticket_types;
    const res = await checkout(
      event.id,
      checkoutBody([{ ticket_type: vip.id, quantity: 2 }], { type: 'credit', card: CARDS.declined }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'declined', decline_reason: 'card_declined', tickets: [] });
    expect((await seats(event.id)).VIP).toEqual({ quantity: 2, sold: 0, held: 0 });
    const again = await checkout(
      event.id,
      checkoutBody([{ ticket_type: vip.id, quantity: 2 }], { type: 'debit', card: CARDS.mastercard }),
    );
    expect(again.body.status).toBe('paid');
  });

  it('pix: pending and holding its seats, then the sandbox confirmation completes it and the tickets are e-mailed', async () => {
    const event = await newEvent();
    const [pista] = event.ticket_types;
    const res = await checkout(
      event.id,
      checkoutBody([{ ticket_type: pista.id, quantity: 2 }], { type: 'pix' }, { email: 'pix@example.com' }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', tickets: [], boleto: null });
    expect(res.body.pix.qr_code).toEqual(expect.any(String));
    // The code stops being payable when the seats stop being held.
    expect(Date.parse(res.body.pix.expires_at)).toBe(Date.parse(res.body.expires_at));
    const expiresIn = Date.parse(res.body.expires_at) - Date.now();
    expect(expiresIn).toBeGreaterThan(29 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(30 * 60_000);
    expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 2 });
    const status = await t.http.get(`/event/event/${event.id}/checkout/${res.body.id}/`);
    expect(status.body).toMatchObject({ status: 'pending', transaction: res.body.transaction });

    const since = smtp.received.length;
    const confirmed = await t.http.post(`/sandbox/transactions/${res.body.transaction}/confirm/`, undefined, {
      token: superuser.access,
    });
    expect(confirmed.status).toBe(200);
    const paid = await t.http.get(`/event/event/${event.id}/checkout/${res.body.id}/`);
    expect(paid.body.status).toBe('paid');
    expect(paid.body.tickets).toHaveLength(2);
    expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 2, held: 0 });
    expect(await outbox('checkout.completed', res.body.id)).toHaveLength(1);
    const mail = await smtp.waitForMail('pix@example.com', since);
    for (const ticket of paid.body.tickets) expect(mail.raw.replace(/=\r?\n/g, '')).toContain(ticket.code);
  });

  it('boleto holds for 3 days, to the end of the day its boleto is due: payable until the seats go back', async () => {
    const event = await newEvent();
    const before = Date.now();
    const res = await checkout(
      event.id,
      checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: 1 }], { type: 'boleto' }),
    );
    const after = Date.now();
    expect(res.body).toMatchObject({ status: 'pending', pix: null });
    expect(res.body.boleto.digitable_line).toEqual(expect.any(String));
    // A due date is a day in Brasília, 3 days on, payable until it ends there.
    expect([addDays(brasiliaDate(before), 3), addDays(brasiliaDate(after), 3)]).toContain(res.body.boleto.due_date);
    const dueDayEnd = brasiliaDayEnd(res.body.boleto.due_date);
    expect(res.body.expires_at).toBe(dueDayEnd.toISOString());
    // The charge can be paid exactly as long as the seats are held.
    const { rows } = await t.db.query('SELECT payable_until FROM transactions WHERE reference = $1', [res.body.id]);
    expect(rows).toEqual([{ payable_until: dueDayEnd }]);
  });

  it('pix is not offered once its 30 minutes would outlast the end of the event: no ticket for an event that is over', async () => {
    const minute = 60_000;
    const ending = await newEvent({
      starts_at: new Date(Date.now() - 60 * minute).toISOString(),
      ends_at: new Date(Date.now() + 20 * minute).toISOString(),
      sales_end_at: new Date(Date.now() + 20 * minute).toISOString(),
      payment_types: ['credit', 'pix'],
    });
    expect((await t.http.get(`/event/event/${ending.id}/`)).body).toMatchObject({
      payment_types: ['credit'],
      sales_open: true,
    });
    const orders = await orderCount();
    const res = await checkout(
      ending.id,
      checkoutBody([{ ticket_type: ending.ticket_types[0].id, quantity: 1 }], { type: 'pix' }),
    );
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({
      'payment.type': ['pix can no longer be paid before the event ends; pay by credit'],
    });
    expect(await orderCount()).toBe(orders);
    // With more than 30 minutes left, pix is offered.
    const later = await newEvent({
      starts_at: new Date(Date.now() - 60 * minute).toISOString(),
      ends_at: new Date(Date.now() + 40 * minute).toISOString(),
      sales_end_at: new Date(Date.now() + 40 * minute).toISOString(),
      payment_types: ['pix'],
    });
    expect((await t.http.get(`/event/event/${later.id}/`)).body.payment_types).toEqual(['pix']);
  });

  it('boleto is not offered once its hold would outlast the start of the event: no ticket for an event under way', async () => {
    const hour = 3_600_000;
    const soon = await newEvent({
      starts_at: new Date(Date.now() + 48 * hour).toISOString(),
      ends_at: new Date(Date.now() + 50 * hour).toISOString(),
      sales_end_at: new Date(Date.now() + 47 * hour).toISOString(),
    });
    const page = await t.http.get(`/event/event/${soon.id}/`);
    expect(page.body.payment_types).toEqual(['credit', 'debit', 'pix']);
    const orders = await orderCount();
    const res = await checkout(
      soon.id,
      checkoutBody([{ ticket_type: soon.ticket_types[0].id, quantity: 1 }], { type: 'boleto' }),
    );
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual({
      'payment.type': ['boleto can no longer be paid before the event starts; pay by credit, debit or pix'],
    });
    expect(await orderCount()).toBe(orders);
    // The seller's own view keeps the event's payment types as set.
    const own = await t.http.get(`/event/event/?seller=${seller.sellerId}`, { token: superuser.access });
    expect(own.body.results.find((e: { id: string }) => e.id === soon.id).payment_types).toEqual([
      'credit',
      'debit',
      'pix',
      'boleto',
    ]);
    // An event sold by boleto only: its sales close then.
    const boletoOnly = await newEvent({
      starts_at: new Date(Date.now() + 48 * hour).toISOString(),
      ends_at: new Date(Date.now() + 50 * hour).toISOString(),
      sales_end_at: new Date(Date.now() + 47 * hour).toISOString(),
      payment_types: ['boleto'],
    });
    expect((await t.http.get(`/event/event/${boletoOnly.id}/`)).body).toMatchObject({
      payment_types: [],
      sales_open: false,
    });
    const closed = await checkout(
      boletoOnly.id,
      checkoutBody([{ ticket_type: boletoOnly.ticket_types[0].id, quantity: 1 }], { type: 'boleto' }),
    );
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe('sales_closed');
  });

  it('pix expiry: the job voids the unpaid charge, the order expires and its seats are released', async () => {
    const event = await newEvent();
    const [pista] = event.ticket_types;
    const res = await checkout(event.id, checkoutBody([{ ticket_type: pista.id, quantity: 3 }], { type: 'pix' }));
    const expiry = t.app.get(CheckoutService);
    expect(await expiry.expireDue(new Date(Date.now() + 29 * 60_000))).toBe(0);
    expect((await seats(event.id)).Pista.held).toBe(3);

    expect(await expiry.expireDue(new Date(Date.now() + 31 * 60_000))).toBeGreaterThanOrEqual(1);
    const order = await t.http.get(`/event/event/${event.id}/checkout/${res.body.id}/`);
    expect(order.body.status).toBe('expired');
    expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 0 });
    const [expired] = await outbox('checkout.expired', res.body.id);
    expect(expired.data).toMatchObject({ id: res.body.id, status: 'expired' });
    const tx = await t.http.get(`/unified/accounts/sellers/${seller.sellerId}/transactions/${res.body.transaction}`, {
      token: superuser.access,
    });
    expect(tx.body).toMatchObject({ status: 'voided', void_reason: 'checkout_expired' });
    const late = await t.http.post(`/sandbox/transactions/${res.body.transaction}/confirm/`, undefined, {
      token: superuser.access,
    });
    expect(late.status).toBe(409);
  });

  it('an order that cannot be expired now (its void fails) does not hold up the expiry of the others', async () => {
    const event = await newEvent();
    const [pista] = event.ticket_types;
    const pix = checkoutBody([{ ticket_type: pista.id, quantity: 2 }], { type: 'pix' });
    const [stuck, next] = [(await checkout(event.id, pix)).body, (await checkout(event.id, pix)).body];
    const real = t.app.get(TransactionsService);
    const failing = Object.assign(Object.create(real) as TransactionsService, {
      void: (...args: Parameters<TransactionsService['void']>) =>
        args[1] === stuck.transaction ? Promise.reject(new Error('processor unreachable')) : real.void(...args),
    });
    const expiry = newTestService(t, CheckoutService, [[TransactionsService, failing]]);
    await expiry.expireDue(new Date(Date.now() + 31 * 60_000));
    const status = async (id: string) => (await t.http.get(`/event/event/${event.id}/checkout/${id}/`)).body.status;
    expect([await status(stuck.id), await status(next.id)]).toEqual(['pending', 'expired']);
    expect((await seats(event.id)).Pista).toMatchObject({ held: 2 });
    // Tried again on the next run.
    await t.app.get(CheckoutService).expireDue(new Date(Date.now() + 31 * 60_000));
    expect(await status(stuck.id)).toBe('expired');
    expect((await seats(event.id)).Pista).toMatchObject({ held: 0 });
  });

  it('a hold left without a charge (a crash between hold and payment) is released by the expiry job', async () => {
    const event = await newEvent();
    const [pista] = event.ticket_types;
    // The state a crash right after the order's database transaction leaves behind.
    const { rows } = await t.db.query(
      `WITH o AS (
         INSERT INTO event_orders (event_id, seller_id, status, amount, payment_type, installments, buyer_name,
           buyer_email, buyer_document, expires_at)
         VALUES ($1, $2, 'pending', 40000, 'credit', 1, 'Ana', 'ana@example.com', '52998224725', now() - interval '1 minute')
         RETURNING id)
       INSERT INTO event_order_items (order_id, ticket_type_id, name, quantity, unit_price) SELECT id, $3, 'Pista', 4, 10000 FROM o
       RETURNING order_id`,
      [event.id, seller.sellerId, pista.id],
    );
    await t.db.query('UPDATE ticket_types SET held = held + 4 WHERE id = $1', [pista.id]);
    expect(await t.app.get(CheckoutService).expireDue(new Date())).toBeGreaterThanOrEqual(1);
    expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 0 });
    const order = await t.http.get(`/event/event/${event.id}/checkout/${rows[0].order_id}/`);
    expect(order.body).toMatchObject({ status: 'expired', transaction: null });
  });

  it('the expiry job takes batch after batch: 201 overdue holds are all released in one run', async () => {
    const event = await newEvent({
      ticket_types: [{ name: 'Pista', price: '100.00', quantity: 300, max_per_order: 4 }],
    });
    const [pista] = event.ticket_types;
    await t.db.query(
      `WITH o AS (
         INSERT INTO event_orders (event_id, seller_id, status, amount, payment_type, installments, buyer_name,
           buyer_email, buyer_document, expires_at)
         SELECT $1, $2, 'pending', 10000, 'pix', 1, 'Ana', 'ana@example.com', '52998224725', now() - interval '1 minute'
           FROM generate_series(1, 201)
         RETURNING id)
       INSERT INTO event_order_items (order_id, ticket_type_id, name, quantity, unit_price) SELECT id, $3, 'Pista', 1, 10000 FROM o`,
      [event.id, seller.sellerId, pista.id],
    );
    await t.db.query('UPDATE ticket_types SET held = held + 201 WHERE id = $1', [pista.id]);
    expect(await t.app.get(CheckoutService).expireDue(new Date())).toBeGreaterThanOrEqual(201);
    expect((await seats(event.id)).Pista).toEqual({ quantity: 300, sold: 0, held: 0 });
  });

  it('`npm run cli -- orders:expire --now <iso>` runs the expiry job as of that time', async () => {
    const event = await newEvent();
    const [pista] = event.ticket_types;
    const res = await checkout(event.id, checkoutBody([{ ticket_type: pista.id, quantity: 2 }], { type: 'pix' }));
    const expire = (minutes: number) =>
      cliProcess(t.databaseUrl, ['orders:expire', '--now', new Date(Date.now() + minutes * 60_000).toISOString()]).done;
    const early = await expire(29);
    expect(early).toMatchObject({ code: 0, output: expect.stringMatching(/Event orders expired as of .*Z: \d+\.\n/) });
    const status = async () => (await t.http.get(`/event/event/${event.id}/checkout/${res.body.id}/`)).body.status;
    expect(await status()).toBe('pending');

    // The command wakes the webhook workers before it stops: its events do not wait for their next look.
    const listener = new Client({ connectionString: t.databaseUrl });
    await listener.connect();
    let signals = 0;
    listener.on('notification', (n) => (signals += n.channel === 'outbox_events' ? 1 : 0));
    await listener.query('LISTEN outbox_events');
    const due = await expire(31);
    expect(due.code).toBe(0);
    expect(Number(/: (\d+)\.\n/.exec(due.output)![1])).toBeGreaterThanOrEqual(1);
    expect(await status()).toBe('expired');
    expect((await seats(event.id)).Pista).toMatchObject({ held: 0 });
    await eventually(async () => signals > 0, 1_000);
    expect(due.output).not.toContain('Could not signal');
    await listener.end();

    const wrong = await cliProcess(t.databaseUrl, ['orders:expire', '--now', 'tomorrow']).done;
    expect(wrong).toMatchObject({ code: 1, output: expect.stringContaining('--now must be an ISO 8601 time') });
    // A production database is never run ahead of time.
    const ahead = await cliProcess(
      t.databaseUrl,
      ['orders:expire', '--now', new Date(Date.now() + 3_600_000).toISOString()],
      { NODE_ENV: 'production' },
    ).done;
    expect(ahead).toMatchObject({
      code: 1,
      output: expect.stringContaining('--now must not be later than the current time with NODE_ENV=production'),
    });
  });

  it('check-in admits a ticket once; other events, unknown codes and unpaid orders answer 404', async () => {
    const event = await newEvent();
    const other = await newEvent();
    const res = await checkout(
      event.id,
      checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
    );
    const code: string = res.body.tickets[0].code;
    const checkIn = (eventId: string, c: string) =>
      t.http.post(`/event/event/${eventId}/tickets/${c}/checkin/`, undefined, { token: superuser.access });

    expect((await checkIn(other.id, code)).status).toBe(404);
    const first = await checkIn(event.id, code.toLowerCase());
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ code, order: res.body.id, event: event.id, ticket_type_name: 'Pista' });
    expect(first.body.checked_in_at).toEqual(expect.any(String));
    const second = await checkIn(event.id, code);
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('ticket_already_checked_in');
    const unknown = await checkIn(event.id, 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('ticket_not_found');

    // Concurrent check-ins of one ticket: exactly one gets in.
    const fresh = await checkout(
      event.id,
      checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
    );
    const statuses = await Promise.all(Array.from({ length: 6 }, () => checkIn(event.id, fresh.body.tickets[0].code)));
    expect(statuses.map((s) => s.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);

    // A paid order whose payment the seller voids: its seats come back and its tickets no longer admit.
    const refunded = await checkout(
      event.id,
      checkoutBody([{ ticket_type: event.ticket_types[1].id, quantity: 2 }], { type: 'credit', card: CARDS.visa }),
    );
    expect((await seats(event.id)).VIP.sold).toBe(2);
    const voided = await t.http.post(
      `/unified/accounts/sellers/${seller.sellerId}/transactions/${refunded.body.transaction}/void/`,
      { reason: 'refund' },
      { token: superuser.access },
    );
    expect(voided.status).toBe(200);
    expect((await seats(event.id)).VIP).toEqual({ quantity: 2, sold: 0, held: 0 });
    const page = await t.http.get(`/event/event/${event.id}/checkout/${refunded.body.id}/`);
    // The buyer's page shows no dead codes, and a code for the reversal, not the seller's words.
    expect(page.body).toMatchObject({ status: 'canceled', tickets: [], decline_reason: 'payment_voided' });
    expect((await checkIn(event.id, refunded.body.tickets[0].code)).status).toBe(404);
  });

  it("a pending order whose payment the seller voids is canceled under a code of its own, whatever the seller's words", async () => {
    const event = await newEvent();
    const [pista] = event.ticket_types;
    for (const reason of ['insufficient_funds', 'not_paid_in_time']) {
      const placed = await checkout(event.id, checkoutBody([{ ticket_type: pista.id, quantity: 1 }], { type: 'pix' }));
      expect(placed.body.status).toBe('pending');
      const voided = await t.http.post(
        `/unified/accounts/sellers/${seller.sellerId}/transactions/${placed.body.transaction}/void/`,
        { reason },
        { token: superuser.access },
      );
      expect(voided.body).toMatchObject({ status: 'voided', void_reason: reason });
      const page = await t.http.get(`/event/event/${event.id}/checkout/${placed.body.id}/`);
      // Not a decline or a timeout that never happened: canceled, seats back, no checkout.expired.
      expect(page.body).toMatchObject({ status: 'canceled', decline_reason: 'payment_voided', tickets: [] });
      expect(await outbox('checkout.expired', placed.body.id)).toHaveLength(0);
    }
    expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 0 });
  });

  describe('bad input', () => {
    let event: any;
    let pista: any;
    let vip: any;
    const card = { type: 'credit', card: CARDS.visa };
    beforeAll(async () => {
      event = await newEvent({ payment_types: ['credit', 'pix'], max_installments: 3 });
      [pista, vip] = event.ticket_types;
    });

    const cases: Array<[string, () => unknown, string, string]> = [
      [
        'unknown ticket type',
        () => checkoutBody([{ ticket_type: event.id, quantity: 1 }], card),
        'items.0.ticket_type',
        '',
      ],
      ['quantity 0', () => checkoutBody([{ ticket_type: pista.id, quantity: 0 }], card), 'items.0.quantity', ''],
      [
        'above max_per_order',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 5 }], card),
        'items.0.quantity',
        '',
      ],
      [
        'duplicate ticket types',
        () =>
          checkoutBody(
            [
              { ticket_type: pista.id, quantity: 1 },
              { ticket_type: pista.id.toUpperCase(), quantity: 1 },
            ],
            card,
          ),
        'items.1.ticket_type',
        '',
      ],
      [
        'more than 20 items',
        () =>
          checkoutBody(
            Array.from({ length: 21 }, () => ({ ticket_type: pista.id, quantity: 1 })),
            card,
          ),
        'items',
        '',
      ],
      ['no items', () => checkoutBody([], card), 'items', ''],
      [
        'payment type not allowed',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], { type: 'boleto' }),
        'payment.type',
        '',
      ],
      [
        'installments above max_installments',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], { ...card, installments: 4 }),
        'payment.installments',
        '',
      ],
      [
        'installments for pix',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], { type: 'pix', installments: 2 }),
        'payment.installments',
        '',
      ],
      [
        'invalid CPF',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], card, { document: '123.456.789-00' }),
        'buyer.document',
        '',
      ],
      [
        'invalid e-mail',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], card, { email: 'nope' }),
        'buyer.email',
        '',
      ],
      [
        'card number failing Luhn',
        () =>
          checkoutBody([{ ticket_type: pista.id, quantity: 1 }], {
            type: 'credit',
            card: { ...CARDS.visa, number: '4111111111111112' },
          }),
        'payment.card.number',
        '',
      ],
      [
        'card missing',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], { type: 'credit' }),
        'payment.card',
        '',
      ],
      [
        'card on pix',
        () => checkoutBody([{ ticket_type: pista.id, quantity: 1 }], { type: 'pix', card: CARDS.visa }),
        'payment.card',
        '',
      ],
      [
        'unknown field',
        () => ({ ...checkoutBody([{ ticket_type: pista.id, quantity: 1 }], card), coupon: 'X' }),
        'coupon',
        '',
      ],
    ];

    it.each(cases)('%s → 400 naming %s, and nothing is written', async (_name, body, path) => {
      const before = await orderCount();
      const res = await checkout(event.id, body());
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(Object.keys(res.body.errors)).toContain(path);
      expect(await orderCount()).toBe(before);
      expect(await seats(event.id)).toEqual({
        Pista: { quantity: 10, sold: 0, held: 0 },
        VIP: { quantity: 2, sold: 0, held: 0 },
      });
    });

    it('reports every bad field of the buyer at once (the CPF with the e-mail)', async () => {
      const res = await checkout(
        event.id,
        checkoutBody([{ ticket_type: pista.id, quantity: 1 }], card, { email: 'nope', document: '123' }),
      );
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual({
        'buyer.email': [expect.any(String)],
        'buyer.document': ['must be a valid CPF or CNPJ'],
      });
    });

    it('unknown, draft and malformed events answer 404', async () => {
      const draft = await t.http.post('/event/event/', eventBody(seller.sellerId), { token: superuser.access });
      for (const id of [draft.body.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const body = checkoutBody([{ ticket_type: pista.id, quantity: 1 }], card);
        const res = await checkout(id, body);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('event_not_found');
        expect((await t.http.get(`/event/event/${id}/`)).status).toBe(404);
      }
    });

    it('sales not open yet, over, or the event closed → 409 sales_closed', async () => {
      const soon = await newEvent({ sales_start_at: new Date(Date.now() + 3_600_000).toISOString() });
      const closed = await newEvent();
      await t.http.patch(`/event/event/${closed.id}/`, { status: 'closed' }, { token: superuser.access });
      for (const e of [soon, closed]) {
        const res = await checkout(e.id, checkoutBody([{ ticket_type: e.ticket_types[0].id, quantity: 1 }], card));
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('sales_closed');
      }
      expect((await t.http.get(`/event/event/${soon.id}/`)).body.sales_open).toBe(false);
      // The public page shows published events only: a closed event is gone from it.
      const gone = await t.http.get(`/event/event/${closed.id}/`);
      expect(gone.status).toBe(404);
      expect(gone.body.code).toBe('event_not_found');
    });

    it('more seats than left → 409 not_enough_tickets saying what is left; none left → 409 sold_out', async () => {
      const e = await newEvent();
      const [, v] = e.ticket_types;
      expect((await checkout(e.id, checkoutBody([{ ticket_type: v.id, quantity: 1 }], { type: 'pix' }))).status).toBe(
        201,
      );
      const more = await checkout(e.id, checkoutBody([{ ticket_type: v.id, quantity: 2 }], card));
      expect(more.status).toBe(409);
      expect(more.body.code).toBe('not_enough_tickets');
      expect(more.body.message).toContain('Only 1 ticket of "VIP"');
      expect(more.body).toMatchObject({ ticket_type: v.id, available: 1 });
      expect((await checkout(e.id, checkoutBody([{ ticket_type: v.id, quantity: 1 }], card))).body.status).toBe('paid');
      const out = await checkout(e.id, checkoutBody([{ ticket_type: v.id, quantity: 1 }], card));
      expect(out.status).toBe(409);
      expect(out.body.code).toBe('sold_out');
      expect(out.body).toMatchObject({ ticket_type: v.id, available: 0 });
      expect((await seats(e.id)).VIP).toEqual({ quantity: 2, sold: 1, held: 1 });
      // A refused multi-item checkout holds nothing of its other items either.
      const mixed = await checkout(
        e.id,
        checkoutBody(
          [
            { ticket_type: e.ticket_types[0].id, quantity: 2 },
            { ticket_type: v.id, quantity: 1 },
          ],
          card,
        ),
      );
      expect(mixed.status).toBe(409);
      expect((await seats(e.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 0 });
      void vip;
    });
  });

  it('seats taken between the read of the event and the hold: the database refuses the hold (409), no order or charge is written', async () => {
    const e = await newEvent();
    const vip = e.ticket_types[1]; // 2 seats
    const orders = await orderCount();
    const chargesBefore = await checkoutCharges();
    // Another buyer's hold of the last 2 seats, not yet committed: the checkout reads 2 left,
    // then its hold waits for this one's row lock and meets the CHECK once it commits.
    const refused = await checkoutBehindAnotherHold(e.id, vip.id);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('sold_out');
    expect(refused.body.message).toBe('"VIP" is sold out.');
    expect(refused.body).toMatchObject({ ticket_type: vip.id, available: 0 });
    expect((await seats(e.id)).VIP).toEqual({ quantity: 2, sold: 0, held: 2 });
    expect(await orderCount()).toBe(orders);
    expect(await checkoutCharges()).toBe(chargesBefore); // the pending charge was in the refused transaction
  });

  it('seats that come back after a refused hold: the order is placed again, once, with one charge', async () => {
    const e = await newEvent();
    const vip = e.ticket_types[1]; // 2 seats
    const orders = await orderCount();
    const chargesBefore = await checkoutCharges();
    // Another buyer holds both seats while this checkout's hold waits, and lets them go right after
    // the database refused this hold (before the checkout counts what is left).
    const repository = t.app.get(TicketedEventsRepository);
    const seatsLeft = repository.seatsLeft.bind(repository);
    const count = jest.spyOn(repository, 'seatsLeft').mockImplementationOnce(async (ids) => {
      await t.db.query('UPDATE ticket_types SET held = held - 2 WHERE id = $1', [vip.id]);
      return seatsLeft(ids);
    });
    try {
      const placed = await checkoutBehindAnotherHold(e.id, vip.id);
      expect(placed.status).toBe(201);
      expect(placed.body.status).toBe('paid');
      expect(count).toHaveBeenCalledTimes(1);
      // The order placed again kept its id, which its one charge names as its reference.
      const { rows } = await t.db.query('SELECT reference FROM transactions WHERE id = $1', [placed.body.transaction]);
      expect(rows).toEqual([{ reference: placed.body.id }]);
    } finally {
      count.mockRestore();
    }
    expect((await seats(e.id)).VIP).toEqual({ quantity: 2, sold: 1, held: 0 });
    expect(await orderCount()).toBe(orders + 1);
    expect(await checkoutCharges()).toBe(chargesBefore + 1);
  });

  it('Idempotency-Key: a retried checkout is answered with the first order and holds nothing twice', async () => {
    const event = await newEvent();
    const body = checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: 2 }], { type: 'pix' });
    const headers = { 'x-forwarded-for': '192.0.2.77', 'idempotency-key': 'checkout-retry-1' };
    const first = await t.http.post(`/event/event/${event.id}/checkout/`, body, { headers });
    const second = await t.http.post(`/event/event/${event.id}/checkout/`, body, { headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    expect((await seats(event.id)).Pista.held).toBe(2);
    const other = await t.http.post(
      `/event/event/${event.id}/checkout/`,
      { ...body, buyer: { ...body.buyer, name: 'Someone Else' } },
      { headers },
    );
    expect(other.status).toBe(422);
  });

  describe('a checkout retried with its Idempotency-Key after a crash', () => {
    const post = (eventId: string, body: unknown, key: string) =>
      t.http.post(`/event/event/${eventId}/checkout/`, body, {
        headers: { 'x-forwarded-for': '192.0.2.88', 'idempotency-key': key },
      });
    const count = async (sql: string, params: unknown[]) => Number((await t.db.query(sql, params)).rows[0].n);
    const chargesOf = (orderId: string) =>
      count(`SELECT count(*) AS n FROM transactions WHERE source = 'event_checkout' AND reference = $1`, [orderId]);
    const processorChargesOf = (orderId: string) =>
      count(
        `SELECT count(*) AS n FROM sandbox_charges c JOIN transactions x ON x.id = c.transaction_id
         WHERE x.reference = $1`,
        [orderId],
      );
    const ordersOf = (eventId: string) =>
      count(`SELECT count(*) AS n FROM event_orders WHERE event_id = $1`, [eventId]);
    const completedEventsOf = (orderId: string) =>
      count(`SELECT count(*) AS n FROM outbox_events WHERE type = 'checkout.completed' AND data->>'id' = $1`, [
        orderId,
      ]);

    /** The key as a process that died during the request leaves it: in progress, its lease over, tied to the order. */
    const keyLeftInProgress = async (key: string, orderId: string) => {
      await t.db.query(
        `UPDATE idempotency_keys SET status = 'in_progress', response_status = NULL, response_body = NULL,
           lease_until = now() - interval '1 second' WHERE key = $1`,
        [key],
      );
      const tied = await t.db.query('SELECT resource_id FROM idempotency_keys WHERE key = $1', [key]);
      expect(tied.rows).toEqual([{ resource_id: orderId }]);
    };
    /** The order as its hold's transaction left it: pending, no transaction, no ticket, its seats held. */
    const backToHeld = async (orderId: string) => {
      await t.db.query('DELETE FROM event_tickets WHERE order_id = $1', [orderId]);
      await t.db.query(
        `UPDATE ticket_types y SET sold = sold - i.quantity, held = held + i.quantity
         FROM event_order_items i WHERE i.order_id = $1 AND y.id = i.ticket_type_id`,
        [orderId],
      );
      await t.db.query(
        `UPDATE event_orders SET status = 'pending', transaction_id = NULL, paid_at = NULL WHERE id = $1`,
        [orderId],
      );
      await t.db.query(`DELETE FROM outbox_events WHERE data->>'id' = $1 OR data->>'reference' = $1`, [orderId]);
    };
    /** The charge as a process that died before the processor's answer was recorded leaves it. */
    const chargeInterrupted = (transactionId: string) =>
      t.db.query(
        `UPDATE transactions SET status = 'pending', approved_at = NULL, processor_reference = NULL WHERE id = $1`,
        [transactionId],
      );
    const paidOnce = async (eventId: string, first: { body: any }, retry: { status: number; body: any }) => {
      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ id: first.body.id, status: 'paid' });
      expect(retry.body.tickets).toHaveLength(2);
      expect(await ordersOf(eventId)).toBe(1);
      expect(await chargesOf(first.body.id)).toBe(1);
      expect(await processorChargesOf(first.body.id)).toBe(1);
      expect(await completedEventsOf(first.body.id)).toBe(1);
      expect((await seats(eventId)).Pista).toEqual({ quantity: 10, sold: 2, held: 0 });
    };
    const body = (pista: string) =>
      checkoutBody([{ ticket_type: pista, quantity: 2 }], { type: 'credit', card: CARDS.visa });

    it('after the charge settled but before the answer was recorded: the same paid order, its tickets', async () => {
      const event = await newEvent();
      const first = await post(event.id, body(event.ticket_types[0].id), 'crash-answered');
      expect(first.body.status).toBe('paid');
      await keyLeftInProgress('crash-answered', first.body.id);
      const retry = await post(event.id, body(event.ticket_types[0].id), 'crash-answered');
      await paidOnce(event.id, first, retry);
      expect(retry.body.tickets).toEqual(first.body.tickets);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      const replay = await post(event.id, body(event.ticket_types[0].id), 'crash-answered');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(retry.body);
    });

    it('during the charge: the processor is asked what became of it, the order completed, nothing charged twice', async () => {
      const event = await newEvent();
      const first = await post(event.id, body(event.ticket_types[0].id), 'crash-charging');
      await backToHeld(first.body.id);
      await chargeInterrupted(first.body.transaction);
      await keyLeftInProgress('crash-charging', first.body.id);
      const retry = await post(event.id, body(event.ticket_types[0].id), 'crash-charging');
      await paidOnce(event.id, first, retry);
      expect(retry.body.transaction).toBe(first.body.transaction);
    });

    it('during the charge, before the processor heard of it: charged once, under the same transaction', async () => {
      const event = await newEvent();
      const first = await post(event.id, body(event.ticket_types[0].id), 'crash-unheard');
      await backToHeld(first.body.id);
      await chargeInterrupted(first.body.transaction);
      await t.db.query('DELETE FROM sandbox_charges WHERE transaction_id = $1', [first.body.transaction]);
      await keyLeftInProgress('crash-unheard', first.body.id);
      const retry = await post(event.id, body(event.ticket_types[0].id), 'crash-unheard');
      await paidOnce(event.id, first, retry);
      expect(retry.body.transaction).toBe(first.body.transaction);
    });

    it('after the hold, before any charge: the held order is charged, no second order or hold', async () => {
      const event = await newEvent();
      const first = await post(event.id, body(event.ticket_types[0].id), 'crash-held');
      await backToHeld(first.body.id);
      await t.db.query('DELETE FROM sandbox_charges WHERE transaction_id = $1', [first.body.transaction]);
      await t.db.query('DELETE FROM transactions WHERE id = $1', [first.body.transaction]);
      expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 2 });
      await keyLeftInProgress('crash-held', first.body.id);
      const retry = await post(event.id, body(event.ticket_types[0].id), 'crash-held');
      await paidOnce(event.id, first, retry);
    });

    it('after the hold, before any charge, and the retry is refused: the held seats go back', async () => {
      const event = await newEvent();
      const first = await post(event.id, body(event.ticket_types[0].id), 'crash-refused');
      await backToHeld(first.body.id);
      await t.db.query('DELETE FROM sandbox_charges WHERE transaction_id = $1', [first.body.transaction]);
      await t.db.query('DELETE FROM transactions WHERE id = $1', [first.body.transaction]);
      await keyLeftInProgress('crash-refused', first.body.id);
      // Meanwhile the seller stopped taking cards for the event.
      const patched = await t.http.patch(
        `/event/event/${event.id}/`,
        { payment_types: ['pix'] },
        { token: superuser.access },
      );
      expect(patched.status).toBe(200);
      const retry = await post(event.id, body(event.ticket_types[0].id), 'crash-refused');
      expect(retry.status).toBe(400);
      expect(retry.body.errors).toHaveProperty(['payment.type']);
      expect((await seats(event.id)).Pista).toEqual({ quantity: 10, sold: 0, held: 0 });
      const order = await t.db.query('SELECT status FROM event_orders WHERE id = $1', [first.body.id]);
      expect(order.rows[0].status).toBe('canceled');
    });
  });

  it('public checkouts are limited to 30 a minute per client address', async () => {
    const event = await newEvent();
    const headers = { 'x-forwarded-for': '192.0.2.200' };
    const body = checkoutBody([{ ticket_type: event.id, quantity: 1 }], { type: 'pix' });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await checkout(event.id, body, headers)).status);
    expect(statuses.slice(0, 30).every((s) => s === 400)).toBe(true);
    expect(statuses[30]).toBe(429);
    // The public page's reads are not limited.
    expect((await t.http.get(`/event/event/${event.id}/`, { headers })).status).toBe(200);
  });

  describe('seller side', () => {
    it('creates a draft, validates dates and ticket types, lists by seller', async () => {
      const created = await t.http.post('/event/event/', eventBody(seller.sellerId), { token: superuser.access });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ status: 'draft', seller: seller.sellerId, sales_open: false });
      expect(created.body.ticket_types[0]).toMatchObject({ name: 'Pista', price: '100.00', available: 10, sold: 0 });

      const bad = await t.http.post(
        '/event/event/',
        eventBody(seller.sellerId, {
          ends_at: '2020-01-01T00:00:00Z',
          ticket_types: [
            { name: 'A', price: '10.00', quantity: 1, max_per_order: 1 },
            { name: 'A', price: '0', quantity: 1, max_per_order: 1 },
          ],
        }),
        { token: superuser.access },
      );
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.errors)).toEqual(expect.arrayContaining(['ticket_types.1.price']));
      const dates = await t.http.post(
        '/event/event/',
        eventBody(seller.sellerId, { ends_at: '2020-01-01T00:00:00Z' }),
        {
          token: superuser.access,
        },
      );
      expect(Object.keys(dates.body.errors)).toEqual(expect.arrayContaining(['ends_at']));
      // A day the month does not have is refused, not rolled over into the next month.
      const impossible = await t.http.post(
        '/event/event/',
        eventBody(seller.sellerId, { starts_at: '2027-02-30T00:00:00Z', sales_end_at: '2027-02-29T00:00:00Z' }),
        { token: superuser.access },
      );
      expect(impossible.status).toBe(400);
      expect(Object.keys(impossible.body.errors).sort()).toEqual(['sales_end_at', 'starts_at']);
      const dup = await t.http.post(
        '/event/event/',
        eventBody(seller.sellerId, {
          ticket_types: [
            { name: 'A', price: '10.00', quantity: 1, max_per_order: 1 },
            { name: 'A', price: '10.00', quantity: 1, max_per_order: 1 },
          ],
        }),
        { token: superuser.access },
      );
      expect(dup.body.errors).toHaveProperty(['ticket_types.1.name']);
      const payments = await t.http.post(
        '/event/event/',
        eventBody(seller.sellerId, { payment_types: ['cash'], max_installments: 13 }),
        { token: superuser.access },
      );
      expect(Object.keys(payments.body.errors)).toEqual(expect.arrayContaining(['payment_types', 'max_installments']));

      const list = await t.http.get(`/event/event/?seller=${seller.sellerId}&limit=1`, { token: superuser.access });
      expect(list.status).toBe(200);
      expect(list.body.results[0].id).toBe(created.body.id);
      expect(list.body.next_cursor).toEqual(expect.any(String));
      const user = await createUser(t);
      const noSeller = await t.http.get('/event/event/', { token: user.access });
      expect(noSeller.status).toBe(400);
      expect(noSeller.body.errors).toHaveProperty('seller');
    });

    it('a draft is published before it can be closed: closing it is 409 and it stays a draft', async () => {
      const draft = await t.http.post('/event/event/', eventBody(seller.sellerId), { token: superuser.access });
      const closing = await t.http.patch(
        `/event/event/${draft.body.id}/`,
        { status: 'closed' },
        { token: superuser.access },
      );
      expect(closing.status).toBe(409);
      expect(closing.body.code).toBe('invalid_state');
      const { rows } = await t.db.query('SELECT status FROM ticketed_events WHERE id = $1', [draft.body.id]);
      expect(rows).toEqual([{ status: 'draft' }]);
      const published = await t.http.patch(
        `/event/event/${draft.body.id}/`,
        { status: 'published' },
        { token: superuser.access },
      );
      expect(published.body.status).toBe('published');
      const closed = await t.http.patch(
        `/event/event/${draft.body.id}/`,
        { status: 'closed' },
        { token: superuser.access },
      );
      expect(closed.body.status).toBe('closed');
    });

    it('names are kept trimmed, compared as buyers read them, and one line long', async () => {
      const create = (overrides: Record<string, unknown>) =>
        t.http.post('/event/event/', eventBody(seller.sellerId, overrides), { token: superuser.access });
      const type = (name: string) => ({ name, price: '10.00', quantity: 1, max_per_order: 1 });

      const trimmed = await create({ name: '  Festival  ', venue: ' Arena ', ticket_types: [type(' Pista ')] });
      expect(trimmed.status).toBe(201);
      expect(trimmed.body).toMatchObject({ name: 'Festival', venue: 'Arena' });
      expect(trimmed.body.ticket_types[0].name).toBe('Pista');
      // The decomposed form of "Písta" (i + combining acute) is kept as the composed one.
      const decomposed = await create({ ticket_types: [type('Pi\u0301sta')] });
      expect(decomposed.body.ticket_types[0].name).toBe('P\u00edsta');

      for (const [a, b] of [
        ['Pista', 'Pista '],
        ['Pista', 'PISTA'],
        ['P\u00edsta', 'Pi\u0301sta'],
      ]) {
        const twins = await create({ ticket_types: [type(a), type(b)] });
        expect(twins.status).toBe(400);
        expect(twins.body.errors).toEqual({
          'ticket_types.1.name': ['is already the name of another ticket type of this event'],
        });
      }
      const added = await t.http.patch(
        `/event/event/${trimmed.body.id}/`,
        { ticket_types: [{ name: 'pista', price: '5.00', quantity: 1, max_per_order: 1 }] },
        { token: superuser.access },
      );
      expect(added.status).toBe(400);
      expect(added.body.errors).toHaveProperty(['ticket_types.0.name']);

      // A name reaches an e-mail's subject: a line break in it is refused, in every name field.
      const broken = await create({
        name: 'Festival\r\nBcc: x@example.com',
        venue: 'A\nB',
        // A right-to-left override: the rest of the line would read backwards.
        ticket_types: [type('VIP \u202eGRATIS')],
      });
      expect(broken.status).toBe(400);
      expect(broken.body.errors).toEqual({
        name: ['must be one line of text, without control characters'],
        venue: ['must be one line of text, without control characters'],
        'ticket_types.0.name': ['must be one line of text, without control characters'],
      });
      const renamed = await t.http.patch(
        `/event/event/${trimmed.body.id}/`,
        { name: 'Festival\nextra' },
        { token: superuser.access },
      );
      expect(renamed.body.errors).toEqual({ name: ['must be one line of text, without control characters'] });
    });

    it('a PATCH that puts the dates out of order is told which of the dates it sent is wrong', async () => {
      const after = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();
      const { starts_at } = eventBody(seller.sellerId);
      // Sales end while the event is on, so ends_at can be moved before sales_end_at alone.
      const event = await newEvent({ sales_end_at: after(starts_at, 3 * 3_600_000) });
      const patch = (body: unknown) => t.http.patch(`/event/event/${event.id}/`, body, { token: superuser.access });

      const start = await patch({ sales_start_at: after(event.sales_end_at, 1000) });
      expect(start.status).toBe(400);
      expect(start.body.errors).toEqual({ sales_start_at: ['must be before sales_end_at'] });
      const end = await patch({ sales_end_at: after(event.ends_at, 1000) });
      expect(end.body.errors).toEqual({ sales_end_at: ['must not be after ends_at'] });
      const endsBefore = await patch({ ends_at: after(event.sales_end_at, -1000) });
      expect(endsBefore.body.errors).toEqual({ ends_at: ['must not be before sales_end_at'] });
      const startsAfter = await patch({ starts_at: after(event.ends_at, 1000) });
      expect(startsAfter.body.errors).toEqual({ starts_at: ['must not be after ends_at'] });
      // Both dates of a pair sent: the rule's own date is named, as on creation.
      const both = await patch({ sales_start_at: after(event.sales_end_at, 1000), sales_end_at: event.sales_end_at });
      expect(both.body.errors).toEqual({ sales_end_at: ['must be after sales_start_at'] });
      const unchanged = await t.http.get(`/event/event/?seller=${seller.sellerId}&limit=100`, {
        token: superuser.access,
      });
      const stored = unchanged.body.results.find((e: any) => e.id === event.id);
      expect(stored).toMatchObject({ sales_start_at: event.sales_start_at, sales_end_at: event.sales_end_at });
    });

    it('quantity goes up, or down to sold + held but never below; ticket types can be added; orders are listed', async () => {
      const event = await newEvent();
      const [pista, vip] = event.ticket_types;
      await checkout(
        event.id,
        checkoutBody([{ ticket_type: vip.id, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
      );
      await checkout(event.id, checkoutBody([{ ticket_type: vip.id, quantity: 1 }], { type: 'pix' }));
      const patch = (body: unknown) => t.http.patch(`/event/event/${event.id}/`, body, { token: superuser.access });

      const below = await patch({ ticket_types: [{ id: vip.id, quantity: 1 }] });
      expect(below.status).toBe(409);
      expect(below.body.code).toBe('quantity_below_committed');
      const price = await patch({ ticket_types: [{ id: pista.id, price: '1.00' }] });
      expect(price.body.errors).toHaveProperty(['ticket_types.0.price']);
      // The price it has may be sent back, as a client sending the whole object does.
      const samePrice = await patch({ ticket_types: [{ id: pista.id, price: pista.price }] });
      expect(samePrice.status).toBe(200);
      expect(samePrice.body.ticket_types[0].price).toBe(pista.price);
      const incomplete = await patch({ ticket_types: [{ name: 'Camarote' }] });
      expect(incomplete.body.errors).toHaveProperty(['ticket_types.0.price']);
      // An id of null is refused as not an id (it answered 500); to add a ticket type, leave it out.
      const nullId = await patch({ ticket_types: [{ id: null, name: 'Camarote', price: '5.00', quantity: 1 }] });
      expect(nullId.status).toBe(400);
      expect(nullId.body.errors).toEqual({ 'ticket_types.0.id': ['must be the id of a ticket type of this event'] });

      // Two ticket types may swap names in one PATCH; one ticket type changed twice is refused.
      const swapped = await patch({
        ticket_types: [
          { id: pista.id, name: 'VIP' },
          { id: vip.id, name: 'Pista' },
        ],
      });
      expect(swapped.status).toBe(200);
      expect(swapped.body.ticket_types.map((x: any) => [x.id, x.name])).toEqual([
        [pista.id, 'VIP'],
        [vip.id, 'Pista'],
      ]);
      const back = await patch({
        ticket_types: [
          { id: pista.id, name: 'Pista' },
          { id: vip.id, name: 'VIP' },
        ],
      });
      expect(back.status).toBe(200);
      const twice = await patch({
        ticket_types: [
          { id: pista.id, quantity: 30 },
          { id: pista.id, quantity: 40 },
        ],
      });
      expect(twice.status).toBe(400);
      expect(twice.body.errors).toEqual({
        'ticket_types.1.id': ['names a ticket type already changed earlier in ticket_types'],
      });

      const ok = await patch({
        name: 'Festival (extra date)',
        ticket_types: [
          { id: vip.id, quantity: 2 },
          { id: pista.id, quantity: 20 },
          { name: 'Camarote', price: '500.00', quantity: 5, max_per_order: 2 },
        ],
      });
      expect(ok.status).toBe(200);
      expect(ok.body.name).toBe('Festival (extra date)');
      // A PATCH that changes nothing leaves updated_at; one that changes only a ticket type moves it.
      for (const body of [{}, { name: 'Festival (extra date)' }]) {
        const same = await patch(body);
        expect([same.status, same.body.updated_at]).toEqual([200, ok.body.updated_at]);
      }
      const moreSeats = await patch({
        ticket_types: [
          { id: pista.id, quantity: 20 },
          { id: vip.id, quantity: 3 },
        ],
      });
      expect(moreSeats.body.updated_at > ok.body.updated_at).toBe(true);
      await patch({ ticket_types: [{ id: vip.id, quantity: 2 }] });
      expect(ok.body.ticket_types.map((x: any) => [x.name, x.quantity, x.sold, x.held, x.available])).toEqual([
        ['Pista', 20, 0, 0, 20],
        ['VIP', 2, 1, 1, 0],
        ['Camarote', 5, 0, 0, 5],
      ]);

      const orders = await t.http.get(`/event/event/${event.id}/orders/`, { token: superuser.access });
      expect(orders.status).toBe(200);
      expect(orders.body.results.map((o: any) => o.status)).toEqual(['pending', 'paid']);
      expect(orders.body.results[1].buyer).toEqual({
        name: 'Ana Souza',
        email: 'ana@example.com',
        document: '52998224725',
      });
      expect(orders.body.results[1].tickets[0]).toMatchObject({ checked_in_at: null });
      const pending = await t.http.get(`/event/event/${event.id}/orders/?status=pending`, { token: superuser.access });
      expect(pending.body.results).toHaveLength(1);
    });

    it('an order keeps the names its ticket types had when it was placed, as it keeps their prices', async () => {
      const event = await newEvent();
      const [, vip] = event.ticket_types;
      const paid = await checkout(
        event.id,
        checkoutBody([{ ticket_type: vip.id, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
      );
      expect(paid.body.status).toBe('paid');
      const renamed = await t.http.patch(
        `/event/event/${event.id}/`,
        { ticket_types: [{ id: vip.id, name: 'VIP Gold' }] },
        { token: superuser.access },
      );
      expect(renamed.body.ticket_types[1].name).toBe('VIP Gold');
      const orders = await t.http.get(`/event/event/${event.id}/orders/`, { token: superuser.access });
      expect(orders.body.results[0].items).toEqual([
        expect.objectContaining({ ticket_type: vip.id, name: 'VIP', quantity: 1, unit_price: vip.price }),
      ]);
      const status = await t.http.get(`/event/event/${event.id}/checkout/${paid.body.id}/`, { headers: from() });
      expect(status.body.items).toEqual([expect.objectContaining({ ticket_type: vip.id, name: 'VIP' })]);
    });
  });
});
