import { startApiProcess } from '../support/api-process';
import { HttpClient, HttpResponse } from '../support/http';
import { createApiKey, createSeller, createUser, grant, TestUser } from '../support/identity';
import { CARDS, payingSeller, PayingSeller } from '../support/payments';
import { recoveryCodeIn, TestSmtpServer } from '../support/smtp';
import { TcpProxy } from '../support/tcp-proxy';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The per-process credential cache with two real API processes on one database. Entries live
 * five minutes here, so only an invalidation explains a refusal: the process that made a
 * change refuses the old credential on the very next request, the other one within a second
 * (PostgreSQL LISTEN/NOTIFY). The same holds for a seller's commercial terms, which every
 * charge reads. Process B listens through a proxy the test can cut: while its notifications are
 * down, B reads every credential from the database.
 */
describe('credential cache (two API processes)', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let proxy: TcpProxy;
  let processes: Array<{ baseUrl: string; stop(): Promise<void> }> = [];
  let a: HttpClient;
  let b: HttpClient;
  let superuser: TestUser;
  let seller: string;

  beforeAll(async () => {
    smtp = new TestSmtpServer();
    await smtp.start();
    t = await startTestApp({ env: { SMTP_URL: smtp.url }, runWorkers: true });
    const target = new URL(t.databaseUrl);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const cached = { CREDENTIAL_CACHE_SECONDS: '300' };
    processes = await Promise.all([
      startApiProcess(t.databaseUrl, cached),
      startApiProcess(t.databaseUrl, { ...cached, DATABASE_LISTEN_URL: proxy.urlFor(t.databaseUrl) }),
    ]);
    [a, b] = processes.map((p) => new HttpClient(p.baseUrl));
    await Promise.all([listening(a), listening(b)]);
    superuser = await createUser(t, { superuser: true });
    seller = await createSeller(t, superuser);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await proxy.cut();
    await t.close();
    await smtp.stop();
  });

  const transactions = () => `/unified/accounts/sellers/${seller}/transactions/`;

  /** A user with transactions.view on the seller, whose token both processes have accepted (and cached). */
  const reader = async () => {
    const user = await createUser(t);
    const accessId = await grant(t, superuser, seller, user, ['transactions.view']);
    // The grant's own notification would empty the entries cached before it arrives.
    await new Promise((r) => setTimeout(r, 300));
    await expectAccepted(transactions(), user.access);
    return { user, accessId };
  };

  const expectAccepted = async (path: string, token: string) => {
    for (const client of [a, b]) expect((await client.get(path, { token })).status).toBe(200);
  };

  /** The change was made through A: A refuses at once; B within a second. */
  const expectRefusedEverywhere = async (path: string, token: string, status: number, code: string) => {
    const atOnce = await a.get(path, { token });
    expect([atOnce.status, atOnce.body.code]).toEqual([status, code]);
    const later = await refusedWithinASecond(b, path, token);
    expect([later.status, later.body.code]).toEqual([status, code]);
  };

  it('logout: the session is refused by the process that logged out at once, and by the other within 1 s', async () => {
    const { user } = await reader();
    expect((await a.post('/user/logout', { refresh: user.refresh })).status).toBe(204);
    await expectRefusedEverywhere('/user/me', user.access, 401, 'token_revoked');
  });

  it('password reset: every earlier token is refused at once here and within 1 s there', async () => {
    const { user } = await reader();
    const since = smtp.received.length;
    expect((await a.post('/user/passwordrecovery', { email: user.email })).status).toBe(202);
    const code = recoveryCodeIn(await smtp.waitForMail(user.email, since));
    const confirmed = await a.post('/user/passwordrecovery/confirm', {
      email: user.email,
      token: code,
      password: 'a brand new password',
    });
    expect(confirmed.status).toBe(200);
    await expectRefusedEverywhere(transactions(), user.access, 401, 'token_revoked');
  });

  it('deactivation by the users admin: refused at once here and within 1 s there', async () => {
    const { user } = await reader();
    expect((await a.patch(`/users/${user.id}`, { active: false }, { token: superuser.access })).status).toBe(200);
    await expectRefusedEverywhere(transactions(), user.access, 401, 'token_revoked');
  });

  it('superuser revoked: the old superuser token loses its rights at once here and within 1 s there', async () => {
    const admin = await createUser(t, { superuser: true });
    await expectAccepted('/users/', admin.access);
    expect((await a.patch(`/users/${admin.id}`, { is_superuser: false }, { token: superuser.access })).status).toBe(
      200,
    );
    await expectRefusedEverywhere('/users/', admin.access, 403, 'superuser_required');
  });

  it('access revocation: the seller disappears for the user at once here and within 1 s there', async () => {
    const { user, accessId } = await reader();
    expect((await a.delete(`/sellers/${seller}/accesses/${accessId}`, { token: superuser.access })).status).toBe(204);
    await expectRefusedEverywhere(transactions(), user.access, 404, 'seller_not_found');
  });

  it('a permission taken away: refused at once here and within 1 s there', async () => {
    const { user, accessId } = await reader();
    const changed = await a.patch(
      `/sellers/${seller}/accesses/${accessId}`,
      { permissions: ['transactions.create'] },
      { token: superuser.access },
    );
    expect(changed.status).toBe(200);
    await expectRefusedEverywhere(transactions(), user.access, 403, 'permission_denied');
  });

  it('API key deactivation and deletion: refused at once here and within 1 s there', async () => {
    const deactivated = await createApiKey(t, superuser.access, seller);
    const deleted = await createApiKey(t, superuser.access, seller);
    await expectAccepted(transactions(), deactivated.key);
    await expectAccepted(transactions(), deleted.key);

    const keys = `/integrations/apikeys/${seller}/apikeys`;
    expect((await a.patch(`${keys}/${deactivated.id}`, { active: false }, { token: superuser.access })).status).toBe(
      200,
    );
    await expectRefusedEverywhere(transactions(), deactivated.key, 401, 'api_key_inactive');
    expect((await a.delete(`${keys}/${deleted.id}`, { token: superuser.access })).status).toBe(204);
    await expectRefusedEverywhere(transactions(), deleted.key, 401, 'invalid_api_key');
  });

  it('a change in the database by any means (here plain SQL) reaches both processes within 1 s', async () => {
    const { user } = await reader();
    await t.db.query('UPDATE users SET token_version = token_version + 1 WHERE id = $1', [user.id]);
    for (const client of [a, b]) {
      const refused = await refusedWithinASecond(client, transactions(), user.access);
      expect([refused.status, refused.body.code]).toEqual([401, 'token_revoked']);
    }
  });

  describe("a seller's commercial terms (read by every charge)", () => {
    let paying: PayingSeller;
    let charges: string;
    const chargeBody = {
      amount: '100.00',
      payment_type: 'credit',
      installments: 1,
      entry_mode: 'online',
      card: CARDS.visa,
    };
    const asSuperuser = () => ({ token: superuser.access });
    const charge = (client: HttpClient) => client.post(charges, chargeBody, asSuperuser());
    /** Charges through `client` until `check` holds; it must hold within a second. */
    const withinASecond = async (client: HttpClient, check: (res: HttpResponse) => boolean) => {
      const started = Date.now();
      for (;;) {
        const res = await charge(client);
        if (check(res)) return res;
        if (Date.now() - started > 1000) throw new Error(`${client.baseUrl}: old terms after 1 s: ${res.text}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const developerOf = (res: HttpResponse) =>
      res.body.split?.shares.find((share: { role: string }) => share.role === 'developer')?.recipient;

    beforeAll(async () => {
      paying = await payingSeller(t, superuser);
      charges = `/unified/accounts/sellers/${paying.sellerId}/transactions/`;
    });

    it('a seller changed through A prices A’s next charge by the new terms at once, B’s within 1 s', async () => {
      for (const client of [a, b]) expect(developerOf(await charge(client))).toBe(paying.developer);
      const developer = await createSeller(t, superuser, 'Another developer');
      const patched = await a.patch(
        `/sellers/${paying.sellerId}`,
        { developer_account: developer },
        { token: superuser.access },
      );
      expect(patched.status).toBe(200);
      expect(developerOf(await charge(a))).toBe(developer);
      expect(developerOf(await withinASecond(b, (res) => developerOf(res) === developer))).toBe(developer);
    });

    it('are cached: a change that notifies nobody is not seen, whatever the spelling of the seller id', async () => {
      const upper = `/unified/accounts/sellers/${paying.sellerId.toUpperCase()}/transactions/`;
      const cached = await createSeller(t, superuser, 'Cached developer');
      const set = await a.patch(`/sellers/${paying.sellerId}`, { developer_account: cached }, asSuperuser());
      expect(set.status).toBe(200);
      await withinASecond(b, (res) => developerOf(res) === cached);
      for (const client of [a, b]) {
        expect(developerOf(await charge(client))).toBe(cached);
        expect(developerOf(await client.post(upper, chargeBody, asSuperuser()))).toBe(cached);
      }
      const silent = await createSeller(t, superuser, 'Silent developer');
      await t.db.query('SET session_replication_role = replica');
      try {
        await t.db.query('UPDATE sellers SET developer_account = $2 WHERE id = $1', [paying.sellerId, silent]);
      } finally {
        await t.db.query('SET session_replication_role = DEFAULT');
      }
      try {
        // Both processes price by what they cached, under either spelling …
        for (const client of [a, b]) {
          expect(developerOf(await charge(client))).toBe(cached);
          expect(developerOf(await client.post(upper, chargeBody, asSuperuser()))).toBe(cached);
        }
        // … and a change through A reaches what was cached under the id in capitals too.
        const restored = await a.patch(
          `/sellers/${paying.sellerId}`,
          { developer_account: paying.developer },
          asSuperuser(),
        );
        expect(restored.status).toBe(200);
        expect(developerOf(await a.post(upper, chargeBody, asSuperuser()))).toBe(paying.developer);
      } finally {
        await t.db.query('UPDATE sellers SET developer_account = $2 WHERE id = $1', [
          paying.sellerId,
          paying.developer,
        ]);
      }
    });

    it('a rate plan changed in the database (as rates:sync does) reaches both processes within 1 s', async () => {
      for (const client of [a, b]) expect((await charge(client)).status).toBe(201);
      await t.db.query('UPDATE rate_plans SET active = false WHERE id = $1', [paying.ratePlanId]);
      try {
        for (const client of [a, b]) {
          const refused = await withinASecond(client, (res) => res.status === 400);
          expect(refused.body.code).toBe('rate_plan_inactive');
        }
      } finally {
        await t.db.query('UPDATE rate_plans SET active = true WHERE id = $1', [paying.ratePlanId]);
      }
      for (const client of [a, b]) expect((await withinASecond(client, (res) => res.status === 201)).status).toBe(201);
    });
  });

  it('while the notification connection is down the cache is emptied and bypassed, until it is back', async () => {
    // Control: a change that notifies nobody (triggers off for this one session) is not seen
    // by a process reading from its cache.
    const silently = async (sql: string, params: unknown[]) => {
      await t.db.query('SET session_replication_role = replica');
      try {
        await t.db.query(sql, params);
      } finally {
        await t.db.query('SET session_replication_role = DEFAULT');
      }
    };
    const first = await reader();
    await silently('UPDATE users SET active = false WHERE id = $1', [first.user.id]);
    await expectAccepted(transactions(), first.user.access);

    // B's notifications stop: B drops what it cached and reads the database on every request …
    await proxy.cut();
    await listening(b, false);
    const refusedByB = await b.get(transactions(), { token: first.user.access });
    expect([refusedByB.status, refusedByB.body.code]).toEqual([401, 'token_revoked']);
    expect((await a.get(transactions(), { token: first.user.access })).status).toBe(200); // A still caches
    const second = await reader(); // cached by A; read from the database by B
    await silently('UPDATE users SET active = false WHERE id = $1', [second.user.id]);
    expect((await b.get(transactions(), { token: second.user.access })).status).toBe(401);
    expect((await a.get(transactions(), { token: second.user.access })).status).toBe(200);

    // … and caches again once they are back.
    await proxy.start();
    await listening(b);
    const third = await reader();
    await silently('UPDATE users SET active = false WHERE id = $1', [third.user.id]);
    await expectAccepted(transactions(), third.user.access);
  });
});

/** Waits until the process reports (metric `credential_cache_listening`) that its notifications arrive, or not. */
async function listening(client: HttpClient, expected = true): Promise<void> {
  await waitFor(async () =>
    (await client.get('/metrics')).text.includes(`credential_cache_listening ${expected ? 1 : 0}`),
  );
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls until the credential is refused; the refusal must come within a second of the call. */
async function refusedWithinASecond(client: HttpClient, path: string, token: string): Promise<HttpResponse> {
  const started = Date.now();
  for (;;) {
    const res = await client.get(path, { token });
    if (res.status !== 200) return res;
    if (Date.now() - started > 1000)
      throw new Error(`${client.baseUrl}${path} still accepted the credential after 1 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
