import { CALLERS, MatrixWorld, matrixWorld, RouteCase, runMatrix, UNAUTHENTICATED } from '../support/auth-matrix';
import { createUser } from '../support/identity';
import { payingSeller } from '../support/payments';
import { createSubscriptionPlan, subscribe, SUBSCRIBER } from '../support/subscriptions';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The auth matrix of the subscription routes (API.md 10.2): the seller side takes a user token
 * with subscriptions.manage on the plan's seller (or a superuser); API keys get 403; another
 * seller's plan or subscription answers 404. The public routes ignore credentials.
 */
describe('auth matrix: subscriptions', () => {
  let t: TestApp;
  let w: MatrixWorld;
  let planId: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: 'true' } });
    const superuser = await createUser(t, { superuser: true });
    const seller = await payingSeller(t, superuser);
    w = await matrixWorld(t, { superuser, sellerA: seller.sellerId });
    planId = await createSubscriptionPlan(t, superuser.access, seller.sellerId);
  });
  afterAll(() => t.close());

  const sellerSide = (ok: number, noAccess = 404) => ({
    ...UNAUTHENTICATED,
    noAccess,
    noPermission: 403,
    permitted: ok,
    superuser: ok,
    apiKey: 403,
    otherSellerKey: 403,
  });
  const anyone = (ok: number) => Object.fromEntries(CALLERS.map((c) => [c, ok])) as RouteCase['expect'];
  const planBody = () => ({
    seller: w.sellerA,
    name: 'Plano',
    amount: '10.00',
    interval: 'month',
    payment_types: ['pix'],
  });

  const routes: Record<string, RouteCase> = {
    'POST /subscriptions/plan': {
      method: 'POST',
      request: () => ({ path: '/subscriptions/plan/', body: planBody() }),
      // A seller the caller cannot see, named in the body, is "Seller not found." (400), as for events.
      expect: sellerSide(201, 400),
    },
    'GET /subscriptions/plan?seller=': {
      method: 'GET',
      request: () => ({ path: `/subscriptions/plan/?seller=${w.sellerA}` }),
      expect: sellerSide(200),
    },
    'PATCH /subscriptions/plan/{id}': {
      method: 'PATCH',
      request: () => ({ path: `/subscriptions/plan/${planId}/`, body: { description: 'Novo texto' } }),
      expect: sellerSide(200),
    },
    'GET /subscriptions/plan/{id}/subscribers': {
      method: 'GET',
      request: () => ({ path: `/subscriptions/plan/${planId}/subscribers/` }),
      expect: sellerSide(200),
    },
    'POST /subscriptions/subscriber/{id}/cancel': {
      method: 'POST',
      request: async () => ({
        path: `/subscriptions/subscriber/${(await subscribe(t, planId)).id}/cancel/`,
        body: { at_period_end: false },
      }),
      expect: sellerSide(200),
    },
    'GET /subscriptions/plan/{id} (public)': {
      method: 'GET',
      request: () => ({ path: `/subscriptions/plan/${planId}/` }),
      expect: anyone(200),
    },
    'GET /subscriptions/subscriber/{id} (public)': {
      method: 'GET',
      request: async () => ({ path: `/subscriptions/subscriber/${(await subscribe(t, planId)).id}/` }),
      expect: anyone(200),
    },
    'POST /subscriptions/plan/{id}/subscribe (public)': {
      method: 'POST',
      request: () => ({
        path: `/subscriptions/plan/${planId}/subscribe/`,
        body: { subscriber: SUBSCRIBER, payment: { type: 'pix' } },
      }),
      expect: anyone(201),
    },
  };

  it.each(Object.keys(routes))('%s', async (name) => {
    const { got, want } = await runMatrix(t, w.callers, routes[name]);
    expect(got).toEqual(want);
  });

  it("another seller's plan is 404 for its managers, and an API key cannot act even on its own seller", async () => {
    const other = await createSubscriptionPlan(t, w.superuser.access, w.sellerB);
    const res = await t.http.patch(`/subscriptions/plan/${other}/`, { name: 'x' }, { token: w.callers.permitted });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('subscription_plan_not_found');
    const key = await t.http.get(`/subscriptions/plan/?seller=${w.sellerA}`, { token: w.callers.apiKey });
    expect(key.body.code).toBe('api_key_not_allowed');
  });

  it('a plan for a seller that does not exist, or one the caller cannot see, is 400 "Seller not found." (nothing leaks)', async () => {
    for (const [seller, token] of [
      ['7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11', w.superuser.access],
      ['7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11', w.callers.permitted],
      [w.sellerB, w.callers.permitted],
    ]) {
      const res = await t.http.post('/subscriptions/plan/', { ...planBody(), seller }, { token });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'seller_not_found', message: 'Seller not found.' });
    }
  });
});
