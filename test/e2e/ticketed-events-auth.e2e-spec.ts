import { PERMISSIONS } from '../../src/auth/permissions';
import { CALLERS, MatrixWorld, matrixWorld, RouteCase, runMatrix, UNAUTHENTICATED } from '../support/auth-matrix';
import { Callers, createUser, grant } from '../support/identity';
import { CARDS, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';
import { checkoutBody, eventBody, publishedEvent } from '../support/ticketed-events';

/**
 * The auth matrix of ticketed events (API.md section 10.1): the seller side takes a JWT with
 * events.manage on the event's seller (or a superuser), an API key gets 403, and an event of
 * a seller the caller cannot see is 404. The public side answers everyone alike.
 */
describe('auth matrix: ticketed events', () => {
  let t: TestApp;
  let w: MatrixWorld;
  let callers: Callers;
  let event: any;
  let ip = 0;

  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: 'true' } });
    const superuser = await createUser(t, { superuser: true });
    const seller = await payingSeller(t, superuser);
    w = await matrixWorld(t, { superuser, sellerA: seller.sellerId });
    // The shared world's "noPermission" user holds events.manage; here it is everything else.
    const lacking = await createUser(t);
    await grant(
      t,
      superuser,
      w.sellerA,
      lacking,
      PERMISSIONS.filter((p) => p !== 'events.manage'),
    );
    callers = { ...w.callers, noPermission: lacking.access };
    event = await publishedEvent(t.http, superuser.access, w.sellerA, {
      ticket_types: [{ name: 'Pista', price: '10.00', quantity: 1000, max_per_order: 4 }],
    });
  });
  afterAll(() => t.close());

  const paidTicket = async () => {
    const res = await t.http.post(
      `/event/event/${event.id}/checkout/`,
      checkoutBody([{ ticket_type: event.ticket_types[0].id, quantity: 1 }], { type: 'credit', card: CARDS.visa }),
      { headers: { 'x-forwarded-for': `203.0.113.${++ip}` } },
    );
    if (res.status !== 201) throw new Error(`checkout: ${res.text}`);
    return res.body.tickets[0].code as string;
  };
  const manage = (ok: number, noAccess = 404) => ({
    ...UNAUTHENTICATED,
    noAccess,
    noPermission: 403,
    permitted: ok,
    superuser: ok,
    apiKey: 403,
    otherSellerKey: 403,
  });
  const everyone = (ok: number) => Object.fromEntries(CALLERS.map((c) => [c, ok])) as RouteCase['expect'];

  const routes: Record<string, RouteCase> = {
    'POST /event/event': {
      method: 'POST',
      request: () => ({ path: '/event/event/', body: eventBody(w.sellerA) }),
      // A seller the caller cannot see, named in the body, is "Seller not found." (400).
      expect: manage(201, 400),
    },
    'GET /event/event?seller=': {
      method: 'GET',
      request: () => ({ path: `/event/event/?seller=${w.sellerA}` }),
      expect: manage(200),
    },
    'PATCH /event/event/{id}': {
      method: 'PATCH',
      request: () => ({ path: `/event/event/${event.id}/`, body: { description: 'Updated.' } }),
      expect: manage(200),
    },
    'GET /event/event/{id}/orders': {
      method: 'GET',
      request: () => ({ path: `/event/event/${event.id}/orders/` }),
      expect: manage(200),
    },
    'POST /event/event/{id}/tickets/{code}/checkin': {
      method: 'POST',
      request: async () => ({ path: `/event/event/${event.id}/tickets/${await paidTicket()}/checkin/` }),
      expect: manage(200),
    },
    'GET /event/event/{event_id} (public)': {
      method: 'GET',
      request: () => ({ path: `/event/event/${event.id}/` }),
      expect: everyone(200),
    },
  };

  for (const [name, route] of Object.entries(routes)) {
    it(`${name}: every kind of caller gets its status`, async () => {
      const { got, want } = await runMatrix(t, callers, route);
      expect(got).toEqual(want);
    });
  }

  it('a superuser lists every seller without ?seller=; others must name one', async () => {
    const all = await t.http.get('/event/event/?limit=100', { token: w.superuser.access });
    expect(all.status).toBe(200);
    expect(all.body.results.map((e: { id: string }) => e.id)).toContain(event.id);
    const res = await t.http.get('/event/event/', { token: callers.permitted });
    expect(res.status).toBe(400);
  });

  it("another seller's user cannot see the event's orders or check its tickets in (404, nothing leaks)", async () => {
    const code = await paidTicket();
    const res = await t.http.post(`/event/event/${event.id}/tickets/${code}/checkin/`, undefined, {
      token: callers.noAccess,
    });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('event_not_found');
    const ok = await t.http.post(`/event/event/${event.id}/tickets/${code}/checkin/`, undefined, {
      token: callers.permitted,
    });
    expect(ok.status).toBe(200);
  });
});
