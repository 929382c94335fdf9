import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { createHmac, randomUUID } from 'node:crypto';
import { UsersService } from '../../src/auth/users.service';
import { PgThrottlerStorage } from '../../src/common/rate-limit/pg-throttler.storage';
import { COUNTER_CONNECTIONS } from '../../src/database/database.module';
import { SharedConnections } from '../../src/database/shared-connections';
import { FixturesModule } from '../support/fixtures.module';
import { createUser, login, validCnpj } from '../support/identity';
import { startTestApp, TEST_JWT_SECRET, TestApp } from '../support/test-app';

describe('users and sessions', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ imports: [FixturesModule] });
  });
  afterAll(() => t.close());

  describe('register', () => {
    it('creates a user with an argon2id password hash and never returns the password', async () => {
      const res = await t.http.post('/user/register', {
        email: 'Ana@Example.com',
        password: 'long enough pw',
        name: 'Ana',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        email: 'ana@example.com',
        name: 'Ana',
        created_at: expect.any(String),
      });
      const { rows } = await t.db.query('SELECT password_hash FROM users WHERE id = $1', [res.body.id]);
      expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);
    });

    it('answers 409 email_taken for an e-mail in use, whatever its case', async () => {
      await t.http.post('/user/register', { email: 'bia@example.com', password: 'long enough pw', name: 'Bia' });
      const res = await t.http.post('/user/register', {
        email: 'BIA@example.com',
        password: 'another pw 123',
        name: 'Bia 2',
      });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('email_taken');
    });

    it('validates e-mail, password length and name', async () => {
      const res = await t.http.post('/user/register', { email: 'nope', password: 'short', name: '' });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors).sort()).toEqual(['email', 'name', 'password']);
      // Invisible characters would make an address that looks like another's.
      for (const email of ['a\u200b@example.com', '\u202eana@example.com', 'ana@exam\u00adple.com']) {
        const lookalike = await t.http.post('/user/register', { email, password: 'long enough pw', name: 'Ana' });
        expect(lookalike.status).toBe(400);
        expect(lookalike.body.errors).toEqual({ email: ['must not contain invisible or control characters'] });
      }
      const long = await t.http.post('/user/register', {
        email: 'x@example.com',
        password: 'x'.repeat(129),
        name: 'X',
      });
      expect(long.body.errors.password).toEqual(['must be 8 to 128 characters']);
    });
  });

  describe('login', () => {
    it('returns access, refresh and the renew interval; the JWTs verify with jose and the configured secret', async () => {
      const user = await createUser(t);
      const res = await t.http.post('/user/login', { email: user.email, password: user.password });
      expect(res.status).toBe(200);
      expect(res.body.access_token_renew_interval).toBe(86_400);
      const secret = new TextEncoder().encode(TEST_JWT_SECRET);
      const access = await jwtVerify(res.body.access, secret, {
        issuer: 'seller-payments',
        audience: 'seller-payments-api',
      });
      const refresh = await jwtVerify(res.body.refresh, secret, {
        issuer: 'seller-payments',
        audience: 'seller-payments-api',
      });
      expect(access.protectedHeader.alg).toBe('HS256');
      expect(access.payload).toMatchObject({ sub: user.id, typ: 'access', ver: 0 });
      expect(refresh.payload).toMatchObject({ sub: user.id, typ: 'refresh', ver: 0 });
      expect(access.payload.exp! - access.payload.iat!).toBe(86_400);
      expect(refresh.payload.exp! - refresh.payload.iat!).toBe(345_600);
      expect(access.payload.jti).not.toBe(refresh.payload.jti);
    });

    it('answers the same 401 for an unknown e-mail and a wrong password', async () => {
      const user = await createUser(t);
      const wrong = await t.http.post('/user/login', { email: user.email, password: 'wrong password' });
      const unknown = await t.http.post('/user/login', { email: 'nobody@example.com', password: 'wrong password' });
      for (const res of [wrong, unknown]) {
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('invalid_credentials');
        expect(res.body.message).toBe('Invalid e-mail or password.');
      }
    });

    it('limits attempts to 10 a minute per address and e-mail, with Retry-After', async () => {
      const email = 'target@example.com';
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++)
        statuses.push((await t.http.post('/user/login', { email, password: 'guess-' + i })).status);
      expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
      const limited = await t.http.post('/user/login', { email, password: 'guess' });
      expect(limited.status).toBe(429);
      expect(limited.body.code).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // another e-mail from the same address is counted apart
      expect((await t.http.post('/user/login', { email: 'other@example.com', password: 'guess' })).status).toBe(401);
    });

    it('counts in a sliding window: no minute, wherever it starts, lets more than 10 through', async () => {
      const email = 'window@example.com';
      const login = async () => (await t.http.post('/user/login', { email, password: 'guess' })).status;
      /** Time passes for the counters: every hit they counted happened `seconds` earlier. */
      const age = (seconds: number) =>
        t.db.query(
          `UPDATE rate_limits SET hit_times = ARRAY(SELECT h - make_interval(secs => $1) FROM unnest(hit_times) h)`,
          [seconds],
        );
      // One attempt, then nine 56 s later: the limit is reached.
      expect(await login()).toBe(401);
      await age(56);
      for (let i = 0; i < 9; i++) expect(await login()).toBe(401);
      expect(await login()).toBe(429);
      // 4.5 s later the first attempt has left the minute, the nine have not: one more goes
      // through, not ten (a fixed window starting with the first attempt would have begun anew).
      await age(4.5);
      expect(await login()).toBe(401);
      const refused = await t.http.post('/user/login', { email, password: 'guess' });
      expect(refused.status).toBe(429);
      // Refused attempts are not counted: the next slot frees when the oldest of the nine leaves
      // the minute (about 55.5 s from now, less the time the attempts took).
      const { rows } = await t.db.query(
        `SELECT extract(epoch FROM hit_times[1] + interval '60 seconds' - now())::float AS left
           FROM rate_limits ORDER BY expires_at DESC LIMIT 1`,
      );
      expect(rows[0].left).toBeLessThan(55.5);
      expect(Math.abs(Number(refused.headers.get('retry-after')) - rows[0].left)).toBeLessThanOrEqual(1.5);
      await age(56);
      expect(await login()).toBe(401);
    });

    it('counts on shared connections whose commits do not wait for the disk, apart from the reads', async () => {
      const setting = async (connections: SharedConnections) =>
        (await connections.query<{ synchronous_commit: string }>('SHOW synchronous_commit', []))[0].synchronous_commit;
      expect(await setting(t.app.get(COUNTER_CONNECTIONS))).toBe('off');
      expect(await setting(t.app.get(SharedConnections))).toBe('on');
    });

    it('the purge deletes expired counters in batches, and leaves the live ones counting', async () => {
      await t.db.query(
        `INSERT INTO rate_limits (key, hits, expires_at)
         SELECT 'expired-' || g, 3, now() - interval '1 second' FROM generate_series(1, 12000) g`,
      );
      const email = 'counted@example.com';
      for (let i = 0; i < 10; i++) await t.http.post('/user/login', { email, password: 'guess-' + i });
      const before = (await t.db.query(`SELECT count(*)::int AS n FROM rate_limits WHERE expires_at <= now()`)).rows[0]
        .n;
      expect(before).toBeGreaterThanOrEqual(12000);
      expect(await t.app.get(PgThrottlerStorage).purgeExpired()).toBe(before);
      expect((await t.db.query(`SELECT count(*)::int AS n FROM rate_limits WHERE expires_at <= now()`)).rows[0].n).toBe(
        0,
      );
      // The live counter survived: the 11th attempt is still refused.
      expect((await t.http.post('/user/login', { email, password: 'guess' })).status).toBe(429);
    });
  });

  describe('refresh and logout', () => {
    it('renews the access token with the refresh token, and not the other way round', async () => {
      const user = await createUser(t);
      const renewed = await t.http.post('/user/token/refresh', { refresh: user.refresh });
      expect(renewed.status).toBe(200);
      expect(renewed.body.access_token_renew_interval).toBe(86_400);
      expect(decodeJwt(renewed.body.access)).toMatchObject({ typ: 'access', sub: user.id });
      expect((await t.http.get('/user/me', { token: renewed.body.access })).status).toBe(200);

      const wrongType = await t.http.post('/user/token/refresh', { refresh: user.access });
      expect(wrongType.status).toBe(401);
      expect(wrongType.headers.get('www-authenticate')).toBe('Bearer');
      expect((await t.http.post('/user/token/refresh', { refresh: 'garbage' })).status).toBe(401);
    });

    it('logout revokes that refresh token only', async () => {
      const user = await createUser(t);
      const second = await login(t, user.email, user.password);
      expect((await t.http.post('/user/logout', { refresh: user.refresh })).status).toBe(204);
      expect((await t.http.post('/user/token/refresh', { refresh: user.refresh })).status).toBe(401);
      expect((await t.http.post('/user/token/refresh', { refresh: second.refresh })).status).toBe(200);
    });

    it('refuses an expired refresh token', async () => {
      const user = await createUser(t);
      const { jti } = decodeJwt(user.refresh);
      await t.db.query(`UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE jti = $1`, [jti]);
      expect((await t.http.post('/user/token/refresh', { refresh: user.refresh })).status).toBe(401);
    });
  });

  describe("create-superuser (the CLI command's service)", () => {
    it('creates a superuser, or promotes an existing user and sets the password', async () => {
      const users = t.app.get(UsersService);
      const created = await users.createOrPromoteSuperuser('Root@Example.com', 'root password 1', 'Root');
      expect(created.created).toBe(true);
      const session = await login(t, 'root@example.com', 'root password 1');
      expect((await t.http.get('/user/me', { token: session.access })).body).toMatchObject({
        is_superuser: true,
        name: 'Root',
      });

      const plain = await createUser(t);
      const promoted = await users.createOrPromoteSuperuser(plain.email, 'new root password');
      expect(promoted).toMatchObject({ created: false, user: { id: plain.id, isSuperuser: true } });
      const again = await login(t, plain.email, 'new root password');
      expect((await t.http.get('/user/me', { token: again.access })).body.is_superuser).toBe(true);
      // the new password ends the sessions of the old one
      expect((await t.http.get('/user/me', { token: plain.access })).status).toBe(401);
      expect((await t.http.post('/user/token/refresh', { refresh: plain.refresh })).status).toBe(401);

      // A name given is stored trimmed, on a creation and on a promotion alike.
      await users.createOrPromoteSuperuser('Spaced@Example.com', 'root password 2', '  Spaced Root ');
      await users.createOrPromoteSuperuser(plain.email, 'new root password', '  Plain Root ');
      const names = await t.db.query(`SELECT name FROM users WHERE email IN ('spaced@example.com', $1) ORDER BY name`, [
        plain.email.toLowerCase(),
      ]);
      expect(names.rows.map((row) => row.name)).toEqual(['Plain Root', 'Spaced Root']);
    });

    const auditOf = async (userId: string) =>
      (
        await t.db.query(
          `SELECT action, actor_kind, actor_id, changes FROM audit_log WHERE target_type = 'user' AND target_id = $1 ORDER BY seq`,
          [userId],
        )
      ).rows;

    it('is audited as the system granting superuser, once: promoting a superuser again writes nothing', async () => {
      const users = t.app.get(UsersService);
      const created = await users.createOrPromoteSuperuser(`cli-${Date.now()}@example.com`, 'root password 1');
      const plain = await createUser(t);
      await users.createOrPromoteSuperuser(plain.email, 'root password 2');
      await users.createOrPromoteSuperuser(plain.email, 'root password 3');
      const granted = { action: 'user.superuser_granted', actor_kind: 'system', actor_id: null };
      expect(await auditOf(created.user.id)).toEqual([
        { ...granted, changes: { is_superuser: { from: false, to: true } } },
      ]);
      expect(await auditOf(plain.id)).toEqual([{ ...granted, changes: { is_superuser: { from: false, to: true } } }]);
    });

    it('reactivates a deactivated user it promotes, who can then log in (audited)', async () => {
      const users = t.app.get(UsersService);
      const root = await createUser(t, { superuser: true });
      const dave = await createUser(t);
      expect((await t.http.patch(`/users/${dave.id}`, { active: false }, { token: root.access })).status).toBe(200);
      const promoted = await users.createOrPromoteSuperuser(dave.email, 'new dave password 1');
      expect(promoted).toMatchObject({ created: false, reactivated: true, user: { active: true, isSuperuser: true } });
      const session = await login(t, dave.email, 'new dave password 1');
      expect((await t.http.get('/user/me', { token: session.access })).body.is_superuser).toBe(true);
      expect((await auditOf(dave.id)).map((row) => [row.action, row.actor_kind])).toEqual([
        ['user.deactivated', 'user'],
        ['user.superuser_granted', 'system'],
        ['user.activated', 'system'],
      ]);
    });
  });

  describe('me', () => {
    it('shows the user and their accesses', async () => {
      const user = await createUser(t);
      const res = await t.http.get('/user/me', { token: user.access });
      expect(res.body).toEqual({
        id: user.id,
        email: user.email,
        name: 'Test User',
        is_superuser: false,
        accesses: [],
      });
    });
  });

  describe('default-deny guard', () => {
    it('refuses a route that declares no access rule', async () => {
      const user = await createUser(t, { superuser: true });
      const res = await t.http.post('/test-fixtures-undeclared', {}, { token: user.access });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('access_not_declared');
    });

    it('answers 401 with WWW-Authenticate for a missing or non-Bearer credential', async () => {
      const missing = await t.http.get('/user/me');
      expect(missing.status).toBe(401);
      expect(missing.body.code).toBe('not_authenticated');
      expect(missing.headers.get('www-authenticate')).toBe('Bearer');
      const basic = await t.http.get('/user/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
      expect(basic.status).toBe(401);
      const forged = await t.http.get('/user/me', { token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl' });
      expect(forged.status).toBe(401);
      expect(forged.body.code).toBe('invalid_token');
    });

    it('refuses a token signed with the secret whose claims the service would not issue (401, never 400 or 200)', async () => {
      const user = await createUser(t);
      const issued = decodeJwt(user.access);
      const now = Math.floor(Date.now() / 1000);
      const sign = (claims: Record<string, unknown>) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setIssuer('seller-payments')
          .setAudience('seller-payments-api')
          .sign(new TextEncoder().encode(TEST_JWT_SECRET));
      const valid = {
        typ: 'access',
        ver: 0,
        sub: user.id,
        jti: randomUUID(),
        sid: issued.sid,
        iat: now,
        exp: now + 600,
      };
      // The control: the same claims as issued are accepted.
      expect((await t.http.get('/user/me', { token: await sign(valid) })).status).toBe(200);
      const bent: Array<[string, Record<string, unknown>]> = [
        ['no expiry', { ...valid, exp: undefined }],
        ['no session (logout could not end it)', { ...valid, sid: undefined }],
        ['issued in the future', { ...valid, iat: now + 3600 }],
        ['a user id that is no UUID', { ...valid, sub: 'admin' }],
        ['a session id that is no UUID', { ...valid, sid: 'x' }],
        ['a token version that is no integer', { ...valid, ver: '0' }],
      ];
      for (const [what, claims] of bent) {
        const res = await t.http.get('/user/me', { token: await sign(claims) });
        expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status: 401, code: 'invalid_token' });
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
      // A token of no access type is named for what it is: only a refresh token is called one.
      for (const [typ, message] of [
        [undefined, 'The token is not an access token.'],
        ['id', 'The token is not an access token.'],
        ['refresh', 'A refresh token cannot be used as an access token.'],
      ]) {
        const res = await t.http.get('/user/me', { token: await sign({ ...valid, typ }) });
        expect({ typ, status: res.status, code: res.body.code, message: res.body.message }).toEqual({
          typ,
          status: 401,
          code: 'invalid_token',
          message,
        });
      }
      // A refresh token without an expiry is refused as well.
      const refresh = decodeJwt(user.refresh);
      const endless = await sign({ typ: 'refresh', ver: 0, sub: user.id, jti: refresh.jti, iat: now });
      expect((await t.http.post('/user/token/refresh', { refresh: endless })).status).toBe(401);
    });

    it('refuses a token signed with the secret whose payload is no claims object (401, never 500)', async () => {
      const part = (value: string) => Buffer.from(value).toString('base64url');
      const signed = (payload: string) => {
        const unsigned = `${part('{"alg":"HS256","typ":"JWT"}')}.${part(payload)}`;
        return `${unsigned}.${createHmac('sha256', TEST_JWT_SECRET).update(unsigned).digest('base64url')}`;
      };
      for (const payload of ['null', '[]', '1', '"x"', 'true']) {
        const token = signed(payload);
        const me = await t.http.get('/user/me', { token });
        expect({ payload, status: me.status, code: me.body.code }).toEqual({
          payload,
          status: 401,
          code: 'invalid_token',
        });
        expect(me.headers.get('www-authenticate')).toBe('Bearer');
        const refreshed = await t.http.post('/user/token/refresh', { refresh: token });
        expect({ payload, status: refreshed.status, code: refreshed.body.code }).toEqual({
          payload,
          status: 401,
          code: 'invalid_token',
        });
      }
    });

    it('keeps Idempotency-Key replays apart per credential', async () => {
      const a = await createUser(t, { superuser: true });
      const b = await createUser(t, { superuser: true });
      const body = { name: 'Same body', document: validCnpj(), email: 'x@example.com' };
      const first = await t.http.post('/sellers', body, {
        token: a.access,
        headers: { 'idempotency-key': 'shared-key' },
      });
      expect(first.status).toBe(201);
      const replay = await t.http.post('/sellers', body, {
        token: a.access,
        headers: { 'idempotency-key': 'shared-key' },
      });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.id).toBe(first.body.id);
      const other = await t.http.post('/sellers', body, {
        token: b.access,
        headers: { 'idempotency-key': 'shared-key' },
      });
      expect(other.headers.get('idempotent-replayed')).toBeNull();
      expect(other.status).toBe(409); // acted for b: the same document exists
      expect(other.body.code).toBe('seller_exists');
    });
  });
});
