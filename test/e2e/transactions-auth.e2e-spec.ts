import { MatrixWorld, matrixWorld, RouteCase, sellerRoute, itAnswersEveryCaller } from '../support/auth-matrix';
import { createUser } from '../support/identity';
import { CARDS, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The auth matrix of the unified transaction routes (spec 4.2 and 5): reads take a JWT with
 * transactions.view or the seller's own API key; create, void and split take a JWT with their
 * permission, and an API key gets 403. Another seller's transaction answers 404.
 */
describe('auth matrix: unified transactions', () => {
  let t: TestApp;
  let w: MatrixWorld;

  beforeAll(async () => {
    t = await startTestApp();
    const superuser = await createUser(t, { superuser: true });
    const seller = await payingSeller(t, superuser);
    w = await matrixWorld(t, { superuser, sellerA: seller.sellerId });
  });
  afterAll(() => t.close());

  const base = () => `/unified/accounts/sellers/${w.sellerA}/transactions`;
  const charge = async (paymentType: 'credit' | 'pix' = 'credit') => {
    const body =
      paymentType === 'credit'
        ? { amount: '100.00', payment_type: 'credit', card: CARDS.visa }
        : { amount: '50.00', payment_type: 'pix' };
    const res = await t.http.post(base(), body, { token: w.superuser.access });
    if (res.status !== 201) throw new Error(`charge: ${res.text}`);
    return res.body.id as string;
  };
  const reads = (ok: number) => sellerRoute(ok, { apiKey: ok, otherSellerKey: 404 });
  const writes = (ok: number) => sellerRoute(ok);

  const routes: Record<string, RouteCase> = {
    'POST /unified/accounts/sellers/{sellers_pk}/transactions': {
      method: 'POST',
      request: () => ({ path: base(), body: { amount: '10.00', payment_type: 'credit', card: CARDS.visa } }),
      expect: writes(201),
    },
    'GET /unified/accounts/sellers/{sellers_pk}/transactions': {
      method: 'GET',
      request: () => ({ path: base() }),
      expect: reads(200),
    },
    'GET /unified/accounts/sellers/{sellers_pk}/transactions/{id}': {
      method: 'GET',
      request: async () => ({ path: `${base()}/${await charge()}` }),
      expect: reads(200),
    },
    'POST /unified/accounts/sellers/{sellers_pk}/transactions/{id}/void': {
      method: 'POST',
      request: async () => ({ path: `${base()}/${await charge()}/void`, body: { reason: 'test' } }),
      expect: writes(200),
    },
    'POST /unified/accounts/sellers/{sellers_pk}/transactions/{id}/split': {
      method: 'POST',
      request: async () => ({
        path: `${base()}/${await charge()}/split`,
        body: { recipient: w.sellerB, amount: '1.00', amount_type: 'fixed' },
      }),
      expect: writes(201),
    },
    'DELETE /unified/accounts/sellers/{sellers_pk}/transactions/{id}/split/{split_pk}': {
      method: 'DELETE',
      request: async () => {
        const id = await charge();
        const rule = await t.http.post(
          `${base()}/${id}/split`,
          { recipient: w.sellerB, amount: '1.00', amount_type: 'fixed' },
          { token: w.superuser.access },
        );
        return { path: `${base()}/${id}/split/${rule.body.id}` };
      },
      expect: writes(204),
    },
    'POST /sandbox/transactions/{id}/confirm': {
      method: 'POST',
      request: async () => ({ path: `/sandbox/transactions/${await charge('pix')}/confirm` }),
      expect: { ...writes(200), apiKey: 403, otherSellerKey: 403 },
    },
  };

  itAnswersEveryCaller(routes, () => ({ t, callers: w.callers }));

  it("answers 404 for another seller's transaction through this seller's path, even to a superuser", async () => {
    const other = await payingSeller(t, w.superuser);
    const res = await t.http.post(
      `/unified/accounts/sellers/${other.sellerId}/transactions`,
      { amount: '5.00', payment_type: 'credit', card: CARDS.visa },
      { token: w.superuser.access },
    );
    const foreign = res.body.id;
    for (const path of [`${base()}/${foreign}`]) {
      expect((await t.http.get(path, { token: w.superuser.access })).status).toBe(404);
      expect((await t.http.get(path, { token: w.callers.apiKey })).status).toBe(404);
    }
    expect((await t.http.post(`${base()}/${foreign}/void`, {}, { token: w.superuser.access })).status).toBe(404);
    const pending = await t.http.post(
      `/unified/accounts/sellers/${other.sellerId}/transactions`,
      { amount: '5.00', payment_type: 'pix' },
      { token: w.superuser.access },
    );
    const confirm = await t.http.post(`/sandbox/transactions/${pending.body.id}/confirm`, undefined, {
      token: w.permittedUser.access,
    });
    expect(confirm.status).toBe(404);
    expect(confirm.body.code).toBe('transaction_not_found');
    const list = await t.http.get(`${base()}?limit=100`, { token: w.callers.apiKey });
    expect(list.body.results.map((x: { id: string }) => x.id)).not.toContain(foreign);
  });
});
