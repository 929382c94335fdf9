import { CheckoutService } from '../../src/events/checkout.service';
import { startApiProcess } from '../support/api-process';
import { createUser } from '../support/identity';
import { CARDS, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';
import { checkoutBody, publishedEvent } from '../support/ticketed-events';

jest.setTimeout(180_000);

/**
 * Inventory under concurrency (API.md section 10.1): parallel checkouts through two API
 * processes on one database never sell or hold more seats than there are, and every declined
 * or expired order gives its seats back.
 */
describe('checkout concurrency: 50 seats, two API processes', () => {
  let t: TestApp;
  let apis: Array<{ baseUrl: string; stop(): Promise<void> }>;
  let event: any;

  beforeAll(async () => {
    t = await startTestApp();
    const superuser = await createUser(t, { superuser: true });
    const seller = await payingSeller(t, superuser);
    event = await publishedEvent(t.http, superuser.access, seller.sellerId, {
      ticket_types: [{ name: 'Pista', price: '80.00', quantity: 50, max_per_order: 3 }],
    });
    apis = await Promise.all([1, 2].map(() => startApiProcess(t.databaseUrl, { TRUST_PROXY: 'true' })));
  });
  afterAll(async () => {
    await Promise.all((apis ?? []).map((api) => api.stop()));
    await t.close();
  });

  const seats = async () =>
    (await t.db.query('SELECT quantity, sold, held FROM ticket_types WHERE event_id = $1', [event.id])).rows[0];
  /** Seats of the event's orders by status, from the orders themselves. */
  const orderSeats = async () => {
    const { rows } = await t.db.query(
      `SELECT o.status, sum(i.quantity)::int AS seats FROM event_orders o JOIN event_order_items i ON i.order_id = o.id
       WHERE o.event_id = $1 GROUP BY o.status`,
      [event.id],
    );
    const seats = Object.fromEntries(rows.map((r) => [r.status, r.seats]));
    return { paid: 0, pending: 0, expired: 0, ...seats } as Record<string, number>;
  };
  const burst = (count: number, payment: (i: number) => Record<string, unknown>) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const res = await fetch(`${apis[i % 2].baseUrl}/event/event/${event.id}/checkout/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.13.${Math.floor(i / 200)}.${i % 200}` },
          body: JSON.stringify(
            checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: (i % 3) + 1 }], payment(i)),
          ),
        });
        return { status: res.status, body: (await res.json()) as any };
      }),
    );

  it('200 parallel checkouts of 1–3 seats: exactly 50 seats sold or held, never more; declines and expiries give them back', async () => {
    // A few pix orders first (1, 2 and 3 seats, one per process at least): whichever kind of
    // order the burst's race favours, these seats are held, to expire and come back below.
    const early = await burst(3, () => ({ type: 'pix' }));
    expect(early.map((r) => [r.status, r.body.status])).toEqual(Array(3).fill([201, 'pending']));
    // Cards approved and pix orders that hold: demand (~400 seats) far above the 44 left.
    // Each process gets both kinds (request i goes to process i % 2).
    const first = await burst(200, (i) =>
      Math.floor(i / 2) % 2 === 0 ? { type: 'credit', card: CARDS.visa } : { type: 'pix' },
    );
    for (const res of first) {
      expect([201, 409]).toContain(res.status);
      if (res.status === 409) expect(['sold_out', 'not_enough_tickets']).toContain(res.body.code);
    }
    const accepted = [...early, ...first].filter((r) => r.status === 201);
    const acceptedSeats = accepted.reduce((sum, r) => sum + r.body.items[0].quantity, 0);
    let now = await seats();
    expect(now.sold + now.held).toBe(50);
    expect(acceptedSeats).toBe(50);
    const byStatus = await orderSeats();
    expect(now.sold).toBe(byStatus.paid);
    expect(now.held).toBe(byStatus.pending);
    expect(first.some((r) => r.body.code === 'sold_out')).toBe(true);

    // Every pix order expires unpaid: its seats come back, the card orders stay sold.
    await t.app.get(CheckoutService).expireDue(new Date(Date.now() + 31 * 60_000));
    now = await seats();
    expect(now.held).toBe(0);
    expect(now.sold).toBe(byStatus.paid);
    expect((await orderSeats()).expired).toBe(byStatus.pending);

    // Declined cards in parallel against what is left: every one of them gives its seats back.
    const declined = await burst(100, () => ({ type: 'credit', card: CARDS.declined }));
    for (const res of declined) {
      expect([201, 409]).toContain(res.status);
      if (res.status === 201) expect(res.body.status).toBe('declined');
    }
    expect(declined.filter((r) => r.status === 201).length).toBeGreaterThan(0);
    const after = await seats();
    expect(after).toEqual({ quantity: 50, sold: byStatus.paid, held: 0 });
    const available = (await t.http.get(`/event/event/${event.id}/`)).body.ticket_types[0].available;
    expect(available).toBe(50 - byStatus.paid);
  });
});
