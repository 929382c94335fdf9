import { createHash } from 'node:crypto';
import { createApiKey, createSeller, createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/** Seller API keys: spec 2.2, 3 and 4.1; API.md section 4. */
describe('seller API keys', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: string;
  const base = () => `/integrations/apikeys/${seller}/apikeys`;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    seller = await createSeller(t, superuser);
  });
  afterAll(() => t.close());

  /** Whether the key authenticates: an API key is refused on user routes with 403, a bad one with 401. */
  const authenticates = async (key: string) => {
    const res = await t.http.get('/user/me', { token: key });
    expect([401, 403]).toContain(res.status);
    return res.status === 403;
  };

  it('creates an active key, shows the UUID4 secret once and stores only its SHA-256', async () => {
    const res = await t.http.post(
      base(),
      { label: 'ERP', description: 'reads transactions' },
      { token: superuser.access },
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      active: true,
      label: 'ERP',
      description: 'reads transactions',
      created_at: expect.any(String),
    });
    const { rows } = await t.db.query('SELECT * FROM api_keys WHERE id = $1', [res.body.id]);
    expect(rows[0].key_hash).toBe(createHash('sha256').update(res.body.key).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(res.body.key);
    expect(await authenticates(res.body.key)).toBe(true);
  });

  it('takes a key after "Bearer" and any spacing a JWT is taken with', async () => {
    const { key } = (await t.http.post(base(), { label: 'spaced', description: '' }, { token: superuser.access })).body;
    for (const authorization of [`Bearer ${key}`, `Bearer  ${key}`, `Bearer\t${key}`, `bearer ${key} `]) {
      const res = await t.http.get('/user/me', { headers: { authorization } });
      expect({ authorization, status: res.status, code: res.body.code }).toEqual({
        authorization,
        status: 403, // authenticated: an API key on a user route
        code: 'api_key_not_allowed',
      });
    }
    const jwt = await t.http.get('/user/me', { headers: { authorization: `Bearer  ${superuser.access}` } });
    expect(jwt.status).toBe(200);
  });

  it("reads the key from the Authorization header only: an access_token field of the query or body is the request's own", async () => {
    const { key } = (await t.http.post(base(), { label: 'header', description: '' }, { token: superuser.access })).body;
    const inQuery = await t.http.get(`/unified/accounts/sellers/${seller}/transactions/?access_token=x`, {
      token: key,
    });
    expect({ status: inQuery.status, errors: inQuery.body.errors }).toEqual({
      status: 400,
      errors: { access_token: ['should not exist'] },
    });
    const endpoint = await t.http.post(
      '/integrations/webhooks',
      { url: 'https://example.com/hooks', events: ['*'] },
      { token: key },
    );
    expect(endpoint.status).toBe(201);
    const inBody = await t.http.patch(
      `/integrations/webhooks/${endpoint.body.id}`,
      { access_token: 'x' },
      { token: key },
    );
    expect({ status: inBody.status, errors: inBody.body.errors }).toEqual({
      status: 400,
      errors: { access_token: ['should not exist'] },
    });
    // The key alone, in the query, still authenticates nothing.
    const onlyInQuery = await t.http.get(`/unified/accounts/sellers/${seller}/transactions/?access_token=${key}`);
    expect({ status: onlyInQuery.status, code: onlyInQuery.body.code }).toEqual({
      status: 401,
      code: 'not_authenticated',
    });
  });

  it('never replays the secret: a repeated creation answers 409 idempotency_secret_not_replayable with the id', async () => {
    const headers = { 'idempotency-key': 'create-key-once' };
    const body = { label: 'POS', description: '' };
    const first = await t.http.post(base(), body, { token: superuser.access, headers });
    expect(first.status).toBe(201);
    // The same request, with the seller id spelt in upper case: the same key of the same user.
    const again = await t.http.post(`/integrations/apikeys/${seller.toUpperCase()}/apikeys/`, body, {
      token: superuser.access,
      headers,
    });
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toMatchObject({ code: 'idempotency_secret_not_replayable', id: first.body.id });
    expect(again.text).not.toContain(first.body.key);
    const stored = await t.db.query(`SELECT response_body FROM idempotency_keys WHERE key = 'create-key-once'`);
    expect(stored.rows).toEqual([{ response_body: { id: first.body.id } }]);
    const keys = await t.db.query('SELECT count(*)::int AS n FROM api_keys WHERE seller_id = $1 AND label = $2', [
      seller,
      'POS',
    ]);
    expect(keys.rows[0].n).toBe(1);
  });

  it('never shows the key in the list or the detail, only its last 4 characters and last use', async () => {
    const created = await createApiKey(t, superuser.access, seller);
    await t.http.get('/user/me', { token: created.key });
    const detail = await t.http.get(`${base()}/${created.id}`, { token: superuser.access });
    expect(detail.status).toBe(200);
    expect(detail.body.key).toBeUndefined();
    expect(detail.text).not.toContain(created.key);
    expect(detail.body.key_suffix).toBe(created.key.slice(-4));
    expect(detail.body.last_used_at).toEqual(expect.any(String));
    const list = await t.http.get(base(), { token: superuser.access });
    expect(list.text).not.toContain(created.key);
    expect(list.body.results.find((k: { id: string }) => k.id === created.id)).toMatchObject({
      key_suffix: created.key.slice(-4),
    });
    expect(list.body).toHaveProperty('next_cursor');
  });

  it('requires label; requires description and accepts "" but not null; defaults active to true', async () => {
    const missing = await t.http.post(base(), {}, { token: superuser.access });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.errors).sort()).toEqual(['description', 'label']);
    expect(missing.body.errors.description).toEqual(['is required (use "" for none)']);
    const nullDescription = await t.http.post(base(), { label: 'x', description: null }, { token: superuser.access });
    expect(nullDescription.status).toBe(400);
    expect(nullDescription.body.errors.description).toBeDefined();
    const blankMessage = 'should not be empty or blank';
    const controlMessage = 'must be one line of text, without control characters';
    for (const [label, messages] of [
      ['', [blankMessage]],
      ['   ', [blankMessage]],
      ['\t\n', [controlMessage, blankMessage]],
    ] as const) {
      const blank = await t.http.post(base(), { label, description: '' }, { token: superuser.access });
      expect({ label, status: blank.status, errors: blank.body.errors }).toEqual({
        label,
        status: 400,
        errors: { label: messages },
      });
    }
    const empty = await t.http.post(base(), { label: 'x', description: '' }, { token: superuser.access });
    expect(empty.status).toBe(201);
    expect(empty.body.active).toBe(true);
    const badActive = await t.http.post(
      base(),
      { label: 'x', description: '', active: 'yes' },
      { token: superuser.access },
    );
    expect(badActive.status).toBe(400);
  });

  it('creates an inactive key that is rejected at authentication until it is set active', async () => {
    const created = await createApiKey(t, superuser.access, seller, false);
    const refused = await t.http.get('/user/me', { token: created.key });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('api_key_inactive');
    const patched = await t.http.patch(`${base()}/${created.id}`, { active: true }, { token: superuser.access });
    expect(patched.status).toBe(200);
    expect(patched.body.active).toBe(true);
    expect(await authenticates(created.key)).toBe(true);
    await t.http.patch(`${base()}/${created.id}`, { active: false }, { token: superuser.access });
    expect(await authenticates(created.key)).toBe(false);
  });

  it('updates label and description, refusing null', async () => {
    const created = await createApiKey(t, superuser.access, seller);
    const res = await t.http.patch(
      `${base()}/${created.id}`,
      { label: 'renamed', description: '' },
      { token: superuser.access },
    );
    expect(res.body).toMatchObject({ label: 'renamed', description: '' });
    expect(
      (await t.http.patch(`${base()}/${created.id}`, { description: null }, { token: superuser.access })).status,
    ).toBe(400);
    expect((await t.http.patch(`${base()}/${created.id}`, { label: null }, { token: superuser.access })).status).toBe(
      400,
    );
  });

  it('a PATCH that changes nothing (empty, or the values the key has) writes nothing: updated_at stays', async () => {
    const created = await createApiKey(t, superuser.access, seller);
    const before = (await t.http.get(`${base()}/${created.id}`, { token: superuser.access })).body;
    for (const body of [{}, { label: before.label, active: true }]) {
      const res = await t.http.patch(`${base()}/${created.id}`, body, { token: superuser.access });
      expect(res.status).toBe(200);
      expect(res.body.updated_at).toBe(before.updated_at);
    }
    const changed = await t.http.patch(`${base()}/${created.id}`, { label: 'moved on' }, { token: superuser.access });
    expect(changed.body.updated_at > before.updated_at).toBe(true);
  });

  it('deletes a key: it stops working at once and is gone from list and detail', async () => {
    const created = await createApiKey(t, superuser.access, seller);
    expect(await authenticates(created.key)).toBe(true);
    expect((await t.http.delete(`${base()}/${created.id}`, { token: superuser.access })).status).toBe(204);
    expect(await authenticates(created.key)).toBe(false);
    expect((await t.http.get(`${base()}/${created.id}`, { token: superuser.access })).status).toBe(404);
    expect((await t.http.delete(`${base()}/${created.id}`, { token: superuser.access })).status).toBe(404);
  });

  it("does not show or change another seller's key through this seller's path", async () => {
    const other = await createSeller(t, superuser, 'Other');
    const key = await createApiKey(t, superuser.access, other);
    expect((await t.http.get(`${base()}/${key.id}`, { token: superuser.access })).status).toBe(404);
    expect((await t.http.patch(`${base()}/${key.id}`, { label: 'x' }, { token: superuser.access })).status).toBe(404);
    expect((await t.http.delete(`${base()}/${key.id}`, { token: superuser.access })).status).toBe(404);
  });

  it('paginates the list with a cursor', async () => {
    const s = await createSeller(t, superuser, 'Paged');
    for (let i = 0; i < 5; i++) await createApiKey(t, superuser.access, s);
    const first = await t.http.get(`/integrations/apikeys/${s}/apikeys?limit=2`, { token: superuser.access });
    expect(first.body.results).toHaveLength(2);
    const second = await t.http.get(`/integrations/apikeys/${s}/apikeys?limit=2&cursor=${first.body.next_cursor}`, {
      token: superuser.access,
    });
    const third = await t.http.get(`/integrations/apikeys/${s}/apikeys?limit=2&cursor=${second.body.next_cursor}`, {
      token: superuser.access,
    });
    expect(third.body.next_cursor).toBeNull();
    const ids = [...first.body.results, ...second.body.results, ...third.body.results].map((k: { id: string }) => k.id);
    expect(new Set(ids).size).toBe(5);
    const oldest = await t.http.get(`/integrations/apikeys/${s}/apikeys?ordering=created_at&limit=5`, {
      token: superuser.access,
    });
    expect(oldest.body.results.map((k: { id: string }) => k.id)).toEqual([...ids].reverse());
    expect((await t.http.get(`/integrations/apikeys/${s}/apikeys?limit=101`, { token: superuser.access })).status).toBe(
      400,
    );
    expect(
      (await t.http.get(`/integrations/apikeys/${s}/apikeys?cursor=bogus`, { token: superuser.access })).body.code,
    ).toBe('invalid_cursor');
    // Another list's cursor is refused, not read as a position in this one (an empty page would pass for the end).
    const sellersPage = await t.http.get('/sellers/?limit=1', { token: superuser.access });
    expect(sellersPage.body.next_cursor).toEqual(expect.any(String));
    const crossed = await t.http.get(`/integrations/apikeys/${s}/apikeys?cursor=${sellersPage.body.next_cursor}`, {
      token: superuser.access,
    });
    expect({ status: crossed.status, code: crossed.body.code }).toEqual({ status: 400, code: 'invalid_cursor' });
    // Nor is the same list's cursor of another seller; the seller's id in another case is the same list.
    const otherSeller = await createSeller(t, superuser);
    const ofOther = await t.http.get(`/integrations/apikeys/${otherSeller}/apikeys?cursor=${first.body.next_cursor}`, {
      token: superuser.access,
    });
    expect({ status: ofOther.status, code: ofOther.body.code }).toEqual({ status: 400, code: 'invalid_cursor' });
    const upper = await t.http.get(
      `/integrations/apikeys/${s.toUpperCase()}/apikeys?limit=2&cursor=${first.body.next_cursor}`,
      { token: superuser.access },
    );
    expect(upper.body.results).toEqual(second.body.results);
  });
});
