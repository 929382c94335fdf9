import { EVENT_TYPES } from '../../src/webhooks/outbox';
import { MatrixWorld, matrixWorld, RouteCase, runMatrix, UNAUTHENTICATED } from '../support/auth-matrix';
import { createApiKey, createSeller, createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';
import { eventually } from '../support/webhook-receiver';

/** Webhook management by API key (API.md section 5): endpoints, secrets, events, limits, auth. */
describe('webhook management', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: string;
  let key: string;
  const base = '/integrations/webhooks';
  const url = 'https://hooks.example.com/payments';
  const as = (token = key) => ({ token });
  const create = async (body: object = {}, token = key) => {
    const res = await t.http.post(`${base}/`, { url, events: ['*'], ...body }, as(token));
    if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
    return res.body as { id: string; secret: string };
  };

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    seller = await createSeller(t, superuser);
    key = (await createApiKey(t, superuser.access, seller)).key;
  });
  afterAll(() => t.close());

  it('registers an endpoint and shows its whsec_ secret (24+ random bytes) only in that response', async () => {
    const res = await t.http.post(
      `${base}/`,
      { url, events: ['transaction.approved', 'transaction.voided'], description: 'ERP' },
      as(),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      seller,
      url,
      events: ['transaction.approved', 'transaction.voided'],
      description: 'ERP',
      active: true,
      disabled_reason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24);
    const detail = await t.http.get(`${base}/${res.body.id}/`, as());
    expect(detail.status).toBe(200);
    expect(detail.body.secret).toBeUndefined();
    expect(detail.text).not.toContain(res.body.secret.slice(6));
    const list = await t.http.get(`${base}/`, as());
    expect(list.text).not.toContain(res.body.secret.slice(6));
    expect(list.body.results.map((w: { id: string }) => w.id)).toContain(res.body.id);
    const other = await create();
    expect(other.secret).not.toBe(res.body.secret);
  });

  it('never replays the secret: a repeated creation with its Idempotency-Key answers 409 with the id', async () => {
    const headers = { 'idempotency-key': `create-${Date.now()}` };
    const body = { url, events: ['transaction.approved'] };
    const first = await t.http.post(`${base}/`, body, { token: key, headers });
    expect(first.status).toBe(201);
    const again = await t.http.post(`${base}/`, body, { token: key, headers });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'idempotency_secret_not_replayable', id: first.body.id });
    expect(again.text).not.toContain(first.body.secret);
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1`, [first.body.id]);
    expect(rows[0].n).toBe(1);
    const test = { 'idempotency-key': `test-${Date.now()}` };
    const sent = await t.http.post(`${base}/${first.body.id}/test/`, undefined, { token: key, headers: test });
    const resent = await t.http.post(`${base}/${first.body.id}/test/`, undefined, { token: key, headers: test });
    expect(resent.status).toBe(202);
    expect(resent.headers.get('idempotent-replayed')).toBe('true');
    expect(resent.body.id).toBe(sent.body.id);
  });

  it('writes audit rows for creation, change, rotation and deletion, with the API key as actor', async () => {
    const apiKey = await createApiKey(t, superuser.access, seller);
    const created = await create({}, apiKey.key);
    await t.http.patch(`${base}/${created.id}/`, { description: 'changed', active: false }, as(apiKey.key));
    await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, as(apiKey.key));
    await t.http.delete(`${base}/${created.id}/`, as(apiKey.key));
    const { rows } = await t.db.query(
      `SELECT actor_kind, actor_id, action, seller_id, target_type, changes FROM audit_log WHERE target_id = $1 ORDER BY created_at, action`,
      [created.id],
    );
    expect(rows.map((r) => r.action).sort()).toEqual([
      'webhook.changed',
      'webhook.created',
      'webhook.deleted',
      'webhook.secret_rotated',
    ]);
    for (const row of rows) {
      expect(row).toMatchObject({
        actor_kind: 'api_key',
        actor_id: apiKey.id,
        seller_id: seller,
        target_type: 'webhook',
      });
      expect(JSON.stringify(row.changes)).not.toContain('whsec_');
    }
    expect(rows.find((r) => r.action === 'webhook.changed').changes).toEqual({
      description: { from: '', to: 'changed' },
      active: { from: true, to: false },
    });
    // A deletion records what was deleted.
    expect(rows.find((r) => r.action === 'webhook.deleted').changes).toEqual({
      url,
      events: ['*'],
      active: false,
      description: 'changed',
    });
  });

  it('refuses unknown event types with their path, an empty list, and unknown fields', async () => {
    const unknown = await t.http.post(`${base}/`, { url, events: ['transaction.approved', 'pix.paid'] }, as());
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('validation_failed');
    expect(Object.keys(unknown.body.errors)).toEqual(['events.1']);
    expect(unknown.body.message).toContain('events.1');
    const empty = await t.http.post(`${base}/`, { url, events: [] }, as());
    expect(empty.status).toBe(400);
    expect(empty.body.errors.events).toBeDefined();
    const missing = await t.http.post(`${base}/`, {}, as());
    expect(Object.keys(missing.body.errors).sort()).toEqual(['events', 'url']);
    // A missing list is said to be missing, not to hold members of the wrong kind.
    expect(missing.body.errors.events).toEqual(['must be an array']);
    const extra = await t.http.post(`${base}/`, { url, events: ['*'], secret: 'mine' }, as());
    expect(extra.status).toBe(400);
    expect(extra.body.errors.secret).toBeDefined();
    const badPatch = await t.http.patch(`${base}/${(await create()).id}/`, { events: ['*', 'nope'] }, as());
    expect(badPatch.status).toBe(400);
    expect(Object.keys(badPatch.body.errors)).toEqual(['events.1']);
    // A value far longer than any event type is refused without being echoed back.
    const huge = await t.http.post(`${base}/`, { url, events: ['x'.repeat(100_000)] }, as());
    expect(huge.status).toBe(400);
    expect(huge.body.code).toBe('validation_failed');
    expect(huge.body.errors).toEqual({
      events: ['must list event types (see GET /integrations/webhooks/event_types/)'],
    });
    expect(JSON.stringify(huge.body).length).toBeLessThan(2_000);
  });

  it('answers 400 webhook_url_not_allowed with the reason for non-URLs, credentials, long and misspelt URLs', async () => {
    const cases: Array<[string, string]> = [
      ['not a url', 'it is not a valid URL'],
      ['https://user:pass@hooks.example.com/', 'it must not contain a user name or password'],
      [`https://hooks.example.com/${'x'.repeat(2040)}`, 'it is longer than 2048 characters'],
      ['ftp://hooks.example.com/', 'it must use https or http'],
      // Not written as it would be called (private URLs are allowed here: the form is checked anyway).
      [' http://127.0.0.1:4000/hooks', 'it must not contain spaces or control characters'],
      ['http:///127.0.0.1/hooks', 'it must start scheme://host'],
      ['http://127.0.0.1:4000/hooks#payments', 'it must not have a fragment (#…)'],
      ['http://127.0.0.1:0/hooks', 'its port must be 1 to 65535'],
    ];
    for (const [bad, reason] of cases) {
      const res = await t.http.post(`${base}/`, { url: bad, events: ['*'] }, as());
      expect({ bad, status: res.status, code: res.body.code }).toEqual({
        bad,
        status: 400,
        code: 'webhook_url_not_allowed',
      });
      expect(res.body.message).toBe(`The webhook URL is not allowed: ${reason}.`);
      // `errors` is for validation failures only (API.md section 1): the message names the reason.
      expect(res.body.errors).toBeUndefined();
    }
    const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = 'not a url'`);
    expect(rows[0].n).toBe(0);
  });

  it('updates url, events, description and active; deletes softly (deliveries kept)', async () => {
    const created = await create();
    const patched = await t.http.patch(
      `${base}/${created.id}/`,
      { url: 'https://hooks.example.com/v2', events: ['transaction.created', 'transaction.created'], active: false },
      as(),
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: 'https://hooks.example.com/v2',
      events: ['transaction.created'],
      active: false,
    });
    // A PATCH that changes nothing (empty, or the values it has) leaves updated_at.
    for (const body of [{}, { url: 'https://hooks.example.com/v2', active: false }]) {
      const same = await t.http.patch(`${base}/${created.id}/`, body, as());
      expect([same.status, same.body.updated_at]).toEqual([200, patched.body.updated_at]);
    }
    const nulled = await t.http.patch(`${base}/${created.id}/`, { description: null }, as());
    expect(nulled.status).toBe(400);
    const removed = await t.http.delete(`${base}/${created.id}/`, as());
    expect(removed.status).toBe(204);
    expect((await t.http.get(`${base}/${created.id}/`, as())).status).toBe(404);
    expect((await t.http.delete(`${base}/${created.id}/`, as())).status).toBe(404);
    const { rows } = await t.db.query(`SELECT deleted_at FROM webhook_endpoints WHERE id = $1`, [created.id]);
    expect(rows[0].deleted_at).not.toBeNull();
    expect((await t.http.get(`${base}/not-a-uuid/`, as())).body.code).toBe('webhook_not_found');
  });

  it('allows at most 16 endpoints per seller (deleted ones do not count)', async () => {
    const own = await createSeller(t, superuser);
    const ownKey = (await createApiKey(t, superuser.access, own)).key;
    const made = await Promise.all(Array.from({ length: 16 }, () => create({}, ownKey)));
    const refused = await t.http.post(`${base}/`, { url, events: ['*'] }, as(ownKey));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('webhook_limit_reached');
    await t.http.delete(`${base}/${made[0].id}/`, as(ownKey));
    expect((await t.http.post(`${base}/`, { url, events: ['*'] }, as(ownKey))).status).toBe(201);
    const { rows } = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_endpoints WHERE seller_id = $1 AND deleted_at IS NULL`,
      [own],
    );
    expect(rows[0].n).toBe(16);
  });

  it('rotates the secret: a new one is shown once and the old one keeps signing for 24 hours', async () => {
    const created = await create();
    const rotated = await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, as());
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ id: created.id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.body.secret).not.toBe(created.secret);
    const secrets = async () =>
      (
        await t.db.query(
          `SELECT e.secret, r.secret AS retired, r.expires_at - now() > interval '23 hours 59 minutes' AS overlap
           FROM webhook_endpoints e JOIN webhook_retired_secrets r ON r.endpoint_id = e.id
           WHERE e.id = $1 ORDER BY r.expires_at`,
          [created.id],
        )
      ).rows;
    expect(await secrets()).toEqual([{ secret: rotated.body.secret, retired: created.secret, overlap: true }]);
    // A second rotation within the day: the first secret keeps its own 24 hours.
    const again = await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, as());
    expect(await secrets()).toEqual([
      { secret: again.body.secret, retired: created.secret, overlap: true },
      { secret: again.body.secret, retired: rotated.body.secret, overlap: true },
    ]);
  });

  it('rotates once per Idempotency-Key: a repeat answers 409 idempotency_secret_not_replayable, never a second secret', async () => {
    const created = await create();
    const key = { 'idempotency-key': `rotate-${created.id}` };
    const first = await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, { ...as(), headers: key });
    expect(first.status).toBe(200);
    const again = await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, { ...as(), headers: key });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'idempotency_secret_not_replayable', id: created.id });
    expect(again.text).not.toContain(first.body.secret);
    const { rows } = await t.db.query(
      `SELECT e.secret, count(r.*)::int AS retired FROM webhook_endpoints e
         LEFT JOIN webhook_retired_secrets r ON r.endpoint_id = e.id WHERE e.id = $1 GROUP BY e.secret`,
      [created.id],
    );
    expect(rows).toEqual([{ secret: first.body.secret, retired: 1 }]);
  });

  it('keeps at most the 10 newest retired secrets, and drops expired ones at the next rotation', async () => {
    const created = await create();
    const rotations: string[] = [];
    for (let i = 0; i < 12; i++) {
      rotations.push((await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, as())).body.secret);
    }
    const retired = async () =>
      (
        await t.db.query(`SELECT secret FROM webhook_retired_secrets WHERE endpoint_id = $1 ORDER BY expires_at`, [
          created.id,
        ])
      ).rows.map((r) => r.secret);
    // Retired: the created secret and the first 11 rotations' secrets; the newest 10 are kept.
    expect(await retired()).toEqual(rotations.slice(1, 11));
    await t.db.query(
      `UPDATE webhook_retired_secrets SET expires_at = now() - interval '1 second' WHERE endpoint_id = $1`,
      [created.id],
    );
    await t.http.post(`${base}/${created.id}/rotate_secret/`, undefined, as());
    expect(await retired()).toEqual([rotations[11]]);
  });

  it('lists every event type with a description', async () => {
    const res = await t.http.get(`${base}/event_types/`, as());
    expect(res.status).toBe(200);
    expect(res.body.map((e: { type: string }) => e.type)).toEqual(EVENT_TYPES);
    expect(res.body.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['virtual_account.deposit.expired', 'virtual_account.payout.failed', 'checkout.expired']),
    );
    for (const e of res.body) expect(e.description.length).toBeGreaterThan(10);
  });

  it('never lets a poller by created_after miss an event that commits after a newer one', async () => {
    const own = await createSeller(t, superuser);
    const ownKey = (await createApiKey(t, superuser.access, own)).key;
    const endpoint = await create({}, ownKey);
    // A slow change: its transaction starts (and stamps its event) first, and commits last.
    await t.db.query('BEGIN');
    const slow = (
      await t.db.query(
        `INSERT INTO outbox_events (type, seller_id, data) VALUES ('transaction.created', $1, '{}') RETURNING id, created_at`,
        [own],
      )
    ).rows[0];
    try {
      const fast = await t.http.post(`${base}/${endpoint.id}/test/`, undefined, as(ownKey));
      expect(fast.status).toBe(202);
      const since = new Date(slow.created_at.getTime() - 1000).toISOString();
      const poll = () => t.http.get(`${base}/events/?created_after=${since}&ordering=created_at`, as(ownKey));
      // While the slow change runs, the newer event is held back: a poller that saw it would
      // move its created_after past the slow one's.
      expect((await poll()).body.results).toEqual([]);
      await t.db.query('COMMIT');
      expect((await poll()).body.results.map((e: { type: string }) => e.type)).toEqual([
        'transaction.created',
        'webhook.test',
      ]);
    } finally {
      await t.db.query('ROLLBACK'); // only when the test failed before COMMIT
    }
  });

  it("lists the key's seller's events newest first, filtered by type and created_after, page by page", async () => {
    const own = await createSeller(t, superuser);
    const ownKey = (await createApiKey(t, superuser.access, own)).key;
    const endpoint = await create({}, ownKey);
    for (let i = 0; i < 3; i++) await t.http.post(`${base}/${endpoint.id}/test/`, undefined, as(ownKey));
    await t.db.query(
      `INSERT INTO outbox_events (type, seller_id, data) VALUES ('transaction.created', $1, '{"id": "t1"}'), ('transaction.created', $2, '{"id": "other"}')`,
      [own, seller],
    );
    // The feed shows an event once no transaction that began before it is still open (visibility
    // horizon): under load, another connection's transaction can hold it back for a moment.
    const all = await eventually(async () => {
      const page = await t.http.get(`${base}/events/?limit=2`, as(ownKey));
      return page.body.results?.[0]?.type === 'transaction.created' && page;
    }, 5_000);
    expect(all.status).toBe(200);
    expect(all.body.results).toHaveLength(2);
    expect(all.body.results[0]).toEqual({
      id: expect.any(String),
      type: 'transaction.created',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: { id: 't1' },
    });
    const rest = await t.http.get(`${base}/events/?limit=2&cursor=${all.body.next_cursor}`, as(ownKey));
    expect(rest.body.results).toHaveLength(2);
    expect(rest.body.next_cursor).toBeNull();
    const tests = await t.http.get(`${base}/events/?type=webhook.test`, as(ownKey));
    expect(tests.body.results).toHaveLength(3);
    expect(tests.body.results[0].data.webhook.id).toBe(endpoint.id);
    const future = await t.http.get(`${base}/events/?created_after=2999-01-01T00:00:00Z`, as(ownKey));
    expect(future.body.results).toEqual([]);
    const badType = await t.http.get(`${base}/events/?type=nope`, as(ownKey));
    expect(badType.status).toBe(400);
    expect(badType.body.errors.type).toBeDefined();
    for (const date of ['yesterday', '2026-02-30T00:00:00Z']) {
      const badDate = await t.http.get(`${base}/events/?created_after=${date}`, as(ownKey));
      expect(badDate.status).toBe(400);
      expect(badDate.body).toMatchObject({
        code: 'validation_failed',
        errors: { created_after: [expect.any(String)] },
      });
    }
  });

  it('lists endpoints by creation time, newest first or oldest first with ordering=created_at', async () => {
    const own = await createSeller(t, superuser);
    const ownKey = (await createApiKey(t, superuser.access, own)).key;
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await create({ description: `e${i}` }, ownKey)).id);
    // Created by transactions that began in another order than they wrote (seq): the first the latest.
    await t.db.query(`UPDATE webhook_endpoints SET created_at = created_at + interval '1 minute' WHERE id = $1`, [
      made[0],
    ]);
    const list = async (query: string) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await t.http.get(`${base}/?limit=1${query}${cursor ? `&cursor=${cursor}` : ''}`, as(ownKey));
        ids.push(...page.body.results.map((e: { id: string }) => e.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      return ids;
    };
    expect(await list('&ordering=created_at')).toEqual([made[1], made[2], made[0]]);
    expect(await list('')).toEqual([made[0], made[2], made[1]]);
  });

  it('orders the feed by creation time, not by insertion: a page read, then a poll from its last created_at, misses nothing', async () => {
    const own = await createSeller(t, superuser);
    const ownKey = (await createApiKey(t, superuser.access, own)).key;
    // Events stamped when their database transaction began: inserted in another order than their
    // creation times, two of them at the same instant.
    const at = (ms: number) => new Date(Date.parse('2026-11-20T10:00:00.000Z') + ms).toISOString();
    const stamps = [at(3), at(1), at(2), at(1), at(0)];
    for (const [i, created] of stamps.entries()) {
      await t.db.query(
        `INSERT INTO outbox_events (type, seller_id, data, created_at, dispatched_at) VALUES ('transaction.created', $1, $2, $3, now())`,
        [own, { n: i }, created],
      );
    }
    const walk = async (ordering: string) => {
      const seen: Array<{ n: number; created_at: string }> = [];
      let cursor: string | null = null;
      do {
        const page: any = await t.http.get(
          `${base}/events/?limit=2${ordering}${cursor ? `&cursor=${cursor}` : ''}`,
          as(ownKey),
        );
        expect(page.status).toBe(200);
        seen.push(...page.body.results.map((e: any) => ({ n: e.data.n, created_at: e.created_at })));
        cursor = page.body.next_cursor;
      } while (cursor);
      return seen;
    };
    // Oldest first: by created_at, ties in insertion order; newest first: the reverse.
    const oldest = [4, 1, 3, 2, 0];
    expect((await walk('&ordering=created_at')).map((e) => e.n)).toEqual(oldest);
    expect((await walk('')).map((e) => e.n)).toEqual([...oldest].reverse());
    // A poller reads one page, then asks for what came at or after the last created_at it saw.
    const first = await t.http.get(`${base}/events/?limit=2&ordering=created_at`, as(ownKey));
    const last = first.body.results[1].created_at;
    const polled = await t.http.get(`${base}/events/?ordering=created_at&created_after=${last}`, as(ownKey));
    const seenIds = new Set(first.body.results.map((e: any) => e.id));
    expect(polled.body.results.filter((e: any) => !seenIds.has(e.id)).map((e: any) => e.data.n)).toEqual([3, 2, 0]);

    // The cursor's event purged meanwhile (past its 90 days): a clear 400, not an empty last page.
    await t.db.query('DELETE FROM outbox_events WHERE id = $1', [first.body.results[1].id]);
    const gone = await t.http.get(
      `${base}/events/?limit=2&ordering=created_at&cursor=${first.body.next_cursor}`,
      as(ownKey),
    );
    expect(gone.status).toBe(400);
    expect(gone.body.code).toBe('invalid_cursor');
  });

  it('refuses a field in the body of the routes that take none (test, rotate_secret, retry), and takes {}', async () => {
    const created = await create();
    const before = await t.db.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [created.id]);
    for (const action of ['test', 'rotate_secret']) {
      const refused = await t.http.post(`${base}/${created.id}/${action}/`, { foo: 1 }, as());
      expect({ action, status: refused.status, errors: refused.body.errors }).toEqual({
        action,
        status: 400,
        errors: { foo: ['should not exist'] },
      });
    }
    expect((await t.db.query('SELECT secret FROM webhook_endpoints WHERE id = $1', [created.id])).rows).toEqual(
      before.rows,
    );
    expect(
      (await t.db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [created.id]))
        .rows[0].n,
    ).toBe(0);
    const tested = await t.http.post(`${base}/${created.id}/test/`, {}, as());
    expect(tested.status).toBe(202);
    const retry = `${base}/${created.id}/deliveries/${tested.body.id}/retry/`;
    expect((await t.http.post(retry, [], as())).body.errors).toEqual({ body: ['must be an object'] });
    expect((await t.http.post(retry, undefined, as())).status).toBe(202);
  });

  it('validates replay periods and refuses test, retry and replay on an inactive endpoint', async () => {
    const created = await create();
    const noSince = await t.http.post(`${base}/${created.id}/replay/`, {}, as());
    expect(noSince.status).toBe(400);
    expect(noSince.body.errors.since).toBeDefined();
    const backwards = await t.http.post(
      `${base}/${created.id}/replay/`,
      { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
      as(),
    );
    expect(backwards.status).toBe(400);
    expect(backwards.body.errors).toEqual({ until: ['must be after since'] });
    for (const since of ['2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z']) {
      const impossible = await t.http.post(`${base}/${created.id}/replay/`, { since }, as());
      expect(impossible.status).toBe(400);
      expect(Object.keys(impossible.body.errors)).toEqual(['since']);
    }
    const badTypes = await t.http.post(
      `${base}/${created.id}/replay/`,
      { since: '2026-01-01T00:00:00Z', event_types: ['*'] },
      as(),
    );
    expect(Object.keys(badTypes.body.errors)).toEqual(['event_types.0']);
    await t.http.patch(`${base}/${created.id}/`, { active: false }, as());
    for (const [path, body] of [
      ['test/', undefined],
      ['replay/', { since: '2026-01-01T00:00:00Z' }],
    ] as const) {
      const res = await t.http.post(`${base}/${created.id}/${path}`, body, as());
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('webhook_inactive');
    }
    const unknownDelivery = await t.http.get(
      `${base}/${created.id}/deliveries/00000000-0000-4000-8000-000000000000/attempts/`,
      as(),
    );
    expect(unknownDelivery.body.code).toBe('webhook_delivery_not_found');
  });

  it('answers 405 with Allow on other methods, before authentication', async () => {
    const put = await t.http.put(`${base}/`, {});
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(put.body.code).toBe('method_not_allowed');
    const detail = await t.http.post(`${base}/00000000-0000-4000-8000-000000000000/`, {});
    expect(detail.status).toBe(405);
    expect(detail.headers.get('allow')).toBe('GET, HEAD, PATCH, DELETE');
    expect((await t.http.get(`${base}/00000000-0000-4000-8000-000000000000/rotate_secret/`)).headers.get('allow')).toBe(
      'POST',
    );
    // `/events/` and `/event_types/` are their own paths, not webhooks whose id is "events".
    for (const path of ['events', 'event_types']) {
      for (const method of ['PATCH', 'DELETE', 'PUT', 'POST'] as const) {
        const answer = await t.http.request(method, `${base}/${path}/`, { body: {} });
        expect({ path, method, status: answer.status, allow: answer.headers.get('allow') }).toEqual({
          path,
          method,
          status: 405,
          allow: 'GET, HEAD',
        });
        expect(answer.body.code).toBe('method_not_allowed');
      }
    }
  });

  describe('auth matrix', () => {
    let w: MatrixWorld;
    let endpoint: string;
    let delivery: string;
    const jwtRefused = { noAccess: 403, noPermission: 403, permitted: 403, superuser: 403 };
    const own = (ok: number) => ({ ...UNAUTHENTICATED, ...jwtRefused, apiKey: ok, otherSellerKey: 404 });
    const any = (ok: number) => ({ ...UNAUTHENTICATED, ...jwtRefused, apiKey: ok, otherSellerKey: ok });

    beforeAll(async () => {
      w = await matrixWorld(t, { superuser });
      endpoint = (await create({}, w.callers.apiKey)).id;
      delivery = (await t.http.post(`${base}/${endpoint}/test/`, undefined, as(w.callers.apiKey))).body.id;
    });

    it('admits only API keys, and only to their own seller', async () => {
      const fresh = async () => ({ path: `${base}/${(await create({}, w.callers.apiKey)).id}/` });
      const routes: RouteCase[] = [
        { method: 'POST', request: () => ({ path: `${base}/`, body: { url, events: ['*'] } }), expect: any(201) },
        { method: 'GET', request: () => ({ path: `${base}/` }), expect: any(200) },
        { method: 'GET', request: () => ({ path: `${base}/event_types/` }), expect: any(200) },
        { method: 'GET', request: () => ({ path: `${base}/events/` }), expect: any(200) },
        { method: 'GET', request: () => ({ path: `${base}/${endpoint}/` }), expect: own(200) },
        {
          method: 'PATCH',
          request: () => ({ path: `${base}/${endpoint}/`, body: { description: 'x' } }),
          expect: own(200),
        },
        { method: 'DELETE', request: fresh, expect: own(204) },
        { method: 'POST', request: () => ({ path: `${base}/${endpoint}/rotate_secret/` }), expect: own(200) },
        { method: 'POST', request: () => ({ path: `${base}/${endpoint}/test/` }), expect: own(202) },
        { method: 'GET', request: () => ({ path: `${base}/${endpoint}/deliveries/` }), expect: own(200) },
        {
          method: 'GET',
          request: () => ({ path: `${base}/${endpoint}/deliveries/${delivery}/attempts/` }),
          expect: own(200),
        },
        {
          method: 'POST',
          request: () => ({ path: `${base}/${endpoint}/deliveries/${delivery}/retry/` }),
          expect: own(202),
        },
        {
          method: 'POST',
          request: () => ({ path: `${base}/${endpoint}/replay/`, body: { since: '2026-01-01T00:00:00Z' } }),
          expect: own(202),
        },
      ];
      for (const [index, route] of routes.entries()) {
        const { got, want } = await runMatrix(t, w.callers, route);
        expect({ route: `${index}: ${route.method}`, got }).toEqual({ route: `${index}: ${route.method}`, got: want });
      }
    });

    it('tells a user token it is not allowed, and never shows another seller its endpoints', async () => {
      const jwt = await t.http.get(`${base}/`, as(w.callers.superuser));
      expect(jwt.body.code).toBe('jwt_not_allowed');
      const other = await t.http.get(`${base}/`, as(w.callers.otherSellerKey));
      expect(other.text).not.toContain(endpoint);
      const otherEvents = await t.http.get(`${base}/events/`, as(w.callers.otherSellerKey));
      expect(otherEvents.text).not.toContain(endpoint);
      const otherDetail = await t.http.get(`${base}/${endpoint}/`, as(w.callers.otherSellerKey));
      expect(otherDetail.body.code).toBe('webhook_not_found');
    });
  });
});

/** URL safety (SSRF) at registration, with private URLs not allowed. */
describe('webhook URL safety at registration', () => {
  let t: TestApp;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'false' } });
    const superuser = await createUser(t, { superuser: true });
    const seller = await createSeller(t, superuser);
    key = (await createApiKey(t, superuser.access, seller)).key;
  });
  afterAll(() => t.close());

  it.each([
    ['http://93.184.216.34/', 'it must use https'],
    ['https://127.0.0.1/', 'a loopback address (127.0.0.1)'],
    ['https://127.9.9.9:8443/x', 'a loopback address'],
    ['https://2130706433/', 'a loopback address (127.0.0.1)'],
    ['https://0x7f000001/', 'a loopback address (127.0.0.1)'],
    ['https://0177.0.0.1/', 'a loopback address (127.0.0.1)'],
    ['https://0x7f.1/', 'a loopback address (127.0.0.1)'],
    ['https://[::1]/', 'a loopback address (::1)'],
    ['https://[::ffff:127.0.0.1]/', 'a loopback address (IPv4-mapped)'],
    ['https://[::ffff:10.0.0.1]/', 'a private address (IPv4-mapped)'],
    ['https://10.0.0.1/', 'a private address'],
    ['https://172.16.0.1/', 'a private address'],
    ['https://172.31.255.254/', 'a private address'],
    ['https://192.168.0.10/', 'a private address'],
    ['https://169.254.169.254/latest/meta-data/', 'a link-local address'],
    ['https://[fe80::1]/', 'a link-local address'],
    ['https://100.64.0.1/', 'a carrier-grade NAT'],
    ['https://0.0.0.0/', 'an unspecified'],
    ['https://224.0.0.251/', 'a multicast address'],
    ['https://[ff02::1]/', 'a multicast address'],
    ['https://[fd00::1]/', 'a unique local'],
    ['https://[fc00::1]/', 'a unique local'],
    ['https://localhost/', 'its host localhost resolves to a loopback address'],
    ['https://no-such-host.invalid/', 'its host no-such-host.invalid does not resolve'],
  ])('refuses %s', async (url, reason) => {
    const res = await t.http.post('/integrations/webhooks/', { url, events: ['*'] }, { token: key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('webhook_url_not_allowed');
    expect(res.body.message).toContain(reason);
    expect(res.body.errors).toBeUndefined();
  });

  it('checks a changed URL the same way', async () => {
    const { rows } = await t.db.query(`SELECT id FROM sellers LIMIT 1`);
    expect(rows).toHaveLength(1);
    const created = await t.http.post(
      '/integrations/webhooks/',
      { url: 'https://93.184.216.34/hooks', events: ['*'] },
      { token: key },
    );
    expect(created.status).toBe(201);
    const patched = await t.http.patch(
      `/integrations/webhooks/${created.body.id}/`,
      { url: 'https://192.168.1.1/' },
      { token: key },
    );
    expect(patched.status).toBe(400);
    expect(patched.body.code).toBe('webhook_url_not_allowed');
    const stored = await t.http.get(`/integrations/webhooks/${created.body.id}/`, { token: key });
    expect(stored.body.url).toBe('https://93.184.216.34/hooks');
  });
});
