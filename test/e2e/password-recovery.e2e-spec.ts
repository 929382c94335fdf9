import { LogCapture } from '../support/log-capture';
import { createUser, login, TestUser } from '../support/identity';
import { recoveryCodeIn, TestSmtpServer } from '../support/smtp';
import { startTestApp, TestApp } from '../support/test-app';

/** Password recovery over real SMTP (API.md section 2, spec 4.7). */
describe('password recovery', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let ip = 0;
  /** Each test calls from its own client address, so rate limits per address do not mix. */
  const from = () => ({ 'x-forwarded-for': `203.0.113.${++ip}` });

  beforeAll(async () => {
    smtp = new TestSmtpServer();
    await smtp.start();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, TRUST_PROXY: 'true' }, runWorkers: true });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const requestCode = async (user: TestUser) => {
    const since = smtp.received.length;
    const res = await t.http.post('/user/passwordrecovery', { email: user.email }, { headers: from() });
    expect(res.status).toBe(202);
    return recoveryCodeIn(await smtp.waitForMail(user.email, since));
  };
  const confirm = (email: string, token: string, password: string, headers = from()) =>
    t.http.post('/user/passwordrecovery/confirm', { email, token, password }, { headers });

  it('mails a 6-digit code, sets the new password with it, and revokes the old password and every old token', async () => {
    const user = await createUser(t);
    const code = await requestCode(user);
    expect(code).toMatch(/^\d{6}$/);
    const { rows } = await t.db.query('SELECT code_hash FROM password_recoveries WHERE user_id = $1', [user.id]);
    expect(rows[0].code_hash).not.toContain(code);

    const res = await confirm(user.email, code, 'a brand new password');
    expect(res.status).toBe(200);
    expect(res.body.message).toEqual(expect.any(String));

    expect((await t.http.post('/user/login', { email: user.email, password: user.password })).status).toBe(401);
    expect((await t.http.post('/user/login', { email: user.email, password: 'a brand new password' })).status).toBe(
      200,
    );
    const oldAccess = await t.http.get('/user/me', { token: user.access });
    expect(oldAccess.status).toBe(401);
    expect(oldAccess.body.code).toBe('token_revoked');
    expect((await t.http.post('/user/token/refresh', { refresh: user.refresh })).status).toBe(401);

    // single use
    expect((await confirm(user.email, code, 'yet another password')).status).toBe(400);
    // the sent mail's body is not kept
    const outbox = await t.db.query(`SELECT status, body FROM mail_outbox WHERE recipient = $1`, [user.email]);
    expect(outbox.rows).toEqual([{ status: 'sent', body: null }]);
  });

  it('answers 202 with the same body for an unknown e-mail, and sends nothing', async () => {
    const known = await createUser(t);
    const since = smtp.received.length;
    const a = await t.http.post('/user/passwordrecovery', { email: 'nobody-here@example.com' }, { headers: from() });
    const b = await t.http.post('/user/passwordrecovery', { email: known.email }, { headers: from() });
    expect(a.status).toBe(202);
    expect(a.body).toEqual(b.body);
    await smtp.waitForMail(known.email, since);
    expect(smtp.received.slice(since).some((m) => m.to.includes('nobody-here@example.com'))).toBe(false);
  });

  it('refuses a wrong code, and burns the code after 5 wrong tries', async () => {
    const user = await createUser(t);
    const code = await requestCode(user);
    const wrong = code === '000000' ? '111111' : '000000';
    const headers = from();
    for (let i = 0; i < 5; i++) {
      const res = await confirm(user.email, wrong, 'a brand new password', headers);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_recovery_token');
    }
    expect((await confirm(user.email, code, 'a brand new password')).status).toBe(400);
    expect((await t.http.post('/user/login', { email: user.email, password: user.password })).status).toBe(200);
  });

  it('answers a code of any other shape as a wrong code (invalid_recovery_token), counted among the 5 tries', async () => {
    const user = await createUser(t);
    const code = await requestCode(user);
    const headers = from();
    for (const malformed of ['abcdef', '12345', '1234567', '', ` ${code}`]) {
      const res = await confirm(user.email, malformed, 'a brand new password', headers);
      expect({ malformed, status: res.status, code: res.body.code }).toEqual({
        malformed,
        status: 400,
        code: 'invalid_recovery_token',
      });
    }
    // Five wrong tries: the code itself is burned.
    expect((await confirm(user.email, code, 'a brand new password')).body.code).toBe('invalid_recovery_token');
    // A code that is no string at all is invalid input.
    const typed = await t.http.post(
      '/user/passwordrecovery/confirm',
      { email: user.email, token: 123456, password: 'a brand new password' },
      { headers: from() },
    );
    expect(typed.status).toBe(400);
    expect(typed.body.code).toBe('validation_failed');
  });

  it('replaces an earlier code with a newer one', async () => {
    const user = await createUser(t);
    const first = await requestCode(user);
    const second = await requestCode(user);
    if (first !== second) expect((await confirm(user.email, first, 'a brand new password')).status).toBe(400);
    expect((await confirm(user.email, second, 'a brand new password')).status).toBe(200);
  });

  it('burns a code when its user is deactivated: reactivating the account does not revive it', async () => {
    const user = await createUser(t);
    const admin = await createUser(t, { superuser: true });
    const code = await requestCode(user);
    const setActive = (active: boolean) => t.http.patch(`/users/${user.id}`, { active }, { token: admin.access });
    expect((await setActive(false)).status).toBe(200);
    expect((await confirm(user.email, code, 'taken over password')).body.code).toBe('invalid_recovery_token');
    expect((await setActive(true)).status).toBe(200);
    const res = await confirm(user.email, code, 'taken over password');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_recovery_token');
    expect((await t.http.post('/user/login', { email: user.email, password: user.password })).status).toBe(200);
  });

  it('refuses a code older than 15 minutes', async () => {
    const user = await createUser(t);
    const code = await requestCode(user);
    await t.db.query(`UPDATE password_recoveries SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [
      user.id,
    ]);
    expect((await confirm(user.email, code, 'a brand new password')).status).toBe(400);
  });

  it('validates the confirm body (a code of the wrong shape is a wrong code, one of the wrong type invalid input)', async () => {
    const res = await t.http.post(
      '/user/passwordrecovery/confirm',
      { email: 'x@example.com', token: 12, password: 'short' },
      { headers: from() },
    );
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors).sort()).toEqual(['password', 'token']);
  });

  it('limits recovery requests to 5 an hour per e-mail and confirmations to 10 a minute per address', async () => {
    const email = 'limited@example.com';
    for (let i = 0; i < 5; i++)
      expect((await t.http.post('/user/passwordrecovery', { email }, { headers: from() })).status).toBe(202);
    const limited = await t.http.post('/user/passwordrecovery', { email }, { headers: from() });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3000);

    const headers = from();
    for (let i = 0; i < 10; i++)
      expect((await confirm(email, '123456', 'a brand new password', headers)).status).toBe(400);
    expect((await confirm(email, '123456', 'a brand new password', headers)).status).toBe(429);
    expect((await confirm(email, '123456', 'a brand new password')).status).toBe(400);
  });

  it('answers a request without an e-mail 400 every time: it has no e-mail to be counted under', async () => {
    for (const body of [{ email: null }, { email: 5 }, { email: '  ' }, {}, { email: null }, { email: 5 }, {}]) {
      const res = await t.http.post('/user/passwordrecovery', body, { headers: from() });
      expect({ body, status: res.status, code: res.body.code }).toEqual({
        body,
        status: 400,
        code: 'validation_failed',
      });
    }
  });
});

describe('password recovery without SMTP_URL', () => {
  it('writes the mail to the log and keeps it in mail_outbox', async () => {
    const logs = new LogCapture();
    const t = await startTestApp({ runWorkers: true, env: { LOG_LEVEL: 'info' }, logDestination: logs });
    try {
      const user = await createUser(t);
      expect((await t.http.post('/user/passwordrecovery', { email: user.email })).status).toBe(202);
      const deadline = Date.now() + 15_000;
      let logged: string | undefined;
      while (!logged && Date.now() < deadline) {
        logged = logs.lines.find((l) => l.includes('E-mail (no SMTP_URL') && l.includes(user.email));
        if (!logged) await new Promise((r) => setTimeout(r, 100));
      }
      expect(logged).toBeDefined();
      const code = /recovery code is (\d{6})/.exec(JSON.parse(logged!).mail.body)![1];
      // The line is written, then the outbox row marked: the row may trail the line by a moment.
      const outboxRows = async () =>
        (await t.db.query(`SELECT status, body FROM mail_outbox WHERE recipient = $1`, [user.email])).rows;
      let rows = await outboxRows();
      const marked = Date.now() + 5_000;
      while (rows[0]?.status !== 'logged' && Date.now() < marked) {
        await new Promise((r) => setTimeout(r, 50));
        rows = await outboxRows();
      }
      expect(rows).toHaveLength(1);
      expect(rows[0].status).toBe('logged');
      expect(rows[0].body).toContain(code);
      expect(
        (
          await t.http.post('/user/passwordrecovery/confirm', {
            email: user.email,
            token: code,
            password: 'from the log 123',
          })
        ).status,
      ).toBe(200);
      await login(t, user.email, 'from the log 123');
    } finally {
      await t.close();
    }
  });
});
