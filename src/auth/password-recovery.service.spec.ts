import { EntityManager } from 'typeorm';
import { createUser, login, TestUser } from '../../test/support/identity';
import { newTestService } from '../../test/support/service-test';
import { startTestApp, TestApp } from '../../test/support/test-app';
import { MailService, OutgoingMail } from '../mail/mail.service';
import { PasswordRecoveryService, RECOVERY_MAX_ATTEMPTS } from './password-recovery.service';

/** The mail port: keeps what was queued, and whether it was queued inside a transaction. */
class FakeMail implements Pick<MailService, 'queue'> {
  readonly sent: Array<OutgoingMail & { inTransaction: boolean }> = [];
  failure: Error | null = null;

  async queue(manager: EntityManager, mail: OutgoingMail): Promise<void> {
    if (this.failure) throw this.failure;
    this.sent.push({ ...mail, inTransaction: manager.queryRunner?.isTransactionActive === true });
  }

  /** The code in the last mail to `to`. */
  codeFor(to: string): string {
    const mail = this.sent.filter((m) => m.to === to).at(-1);
    const code = mail && /recovery code is (\d{6})\./.exec(mail.text)?.[1];
    if (!code) throw new Error(`no recovery code was mailed to ${to}`);
    return code;
  }
}

/** A six-digit code that is not `code`. */
const otherThan = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const NEW_PASSWORD = 'a brand new passphrase';

describe('PasswordRecoveryService with a fake mail port', () => {
  let t: TestApp;
  let mail: FakeMail;
  let service: PasswordRecoveryService;
  let user: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    mail = new FakeMail();
    service = newTestService(t, PasswordRecoveryService, [[MailService, mail]]);
    user = await createUser(t);
  });

  const pending = async () =>
    (await t.db.query('SELECT code_hash, attempts FROM password_recoveries WHERE user_id = $1', [user.id])).rows[0];
  const passwordHash = async () =>
    (await t.db.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows[0].password_hash;
  const liveSessions = async () =>
    Number(
      (await t.db.query('SELECT count(*) FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL', [user.id]))
        .rows[0].count,
    );
  const refused = { status: 400, code: 'invalid_recovery_token' };

  it('mails a six-digit code in the transaction that stores it, and stores only an HMAC of it', async () => {
    await service.request(user.email.toUpperCase());

    expect(mail.sent).toEqual([
      expect.objectContaining({ to: user.email, subject: 'Your password recovery code', inTransaction: true }),
    ]);
    const code = mail.codeFor(user.email);
    const stored = await pending();
    expect(stored.attempts).toBe(0);
    expect(stored.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.code_hash).not.toContain(code);
  });

  it('mails nothing and answers the same for an e-mail that belongs to nobody', async () => {
    await expect(service.request('nobody-at-all@example.com')).resolves.toBeUndefined();
    expect(mail.sent).toEqual([]);
  });

  it('stores no code when the mail cannot be queued', async () => {
    mail.failure = new Error('outbox unavailable');
    await expect(service.request(user.email)).rejects.toThrow('outbox unavailable');
    expect(await pending()).toBeUndefined();
  });

  it('sets the new password with the mailed code, ends every session and uses the code once', async () => {
    await service.request(user.email);
    const code = mail.codeFor(user.email);
    expect(await liveSessions()).toBe(1);

    await service.confirm(user.email, code, NEW_PASSWORD);

    expect(await pending()).toBeUndefined();
    expect(await liveSessions()).toBe(0);
    await expect(login(t, user.email, NEW_PASSWORD)).resolves.toHaveProperty('access');
    await expect(login(t, user.email, user.password)).rejects.toThrow(/401/);
    await expect(service.confirm(user.email, code, 'yet another passphrase')).rejects.toMatchObject(refused);
  });

  it(`counts wrong codes and burns the code at the ${RECOVERY_MAX_ATTEMPTS}th, after which the right one fails`, async () => {
    await service.request(user.email);
    const code = mail.codeFor(user.email);
    const before = await passwordHash();

    for (let attempt = 1; attempt < RECOVERY_MAX_ATTEMPTS; attempt++) {
      await expect(service.confirm(user.email, otherThan(code), NEW_PASSWORD)).rejects.toMatchObject(refused);
      expect(await pending()).toMatchObject({ attempts: attempt });
    }
    await expect(service.confirm(user.email, otherThan(code), NEW_PASSWORD)).rejects.toMatchObject(refused);
    expect(await pending()).toBeUndefined();

    await expect(service.confirm(user.email, code, NEW_PASSWORD)).rejects.toMatchObject(refused);
    expect(await passwordHash()).toBe(before);
    expect(await liveSessions()).toBe(1);
  });

  it('replaces the code on a new request: the old one fails, the new one works, the tries start again', async () => {
    await service.request(user.email);
    const first = mail.codeFor(user.email);
    await expect(service.confirm(user.email, otherThan(first), NEW_PASSWORD)).rejects.toMatchObject(refused);

    await service.request(user.email);
    const second = mail.codeFor(user.email);
    expect(mail.sent).toHaveLength(2);
    expect(await pending()).toMatchObject({ attempts: 0 });

    if (first !== second) {
      await expect(service.confirm(user.email, first, NEW_PASSWORD)).rejects.toMatchObject(refused);
    }
    await service.confirm(user.email, second, NEW_PASSWORD);
    await expect(login(t, user.email, NEW_PASSWORD)).resolves.toHaveProperty('access');
  });

  it('refuses and burns an expired code', async () => {
    await service.request(user.email);
    const code = mail.codeFor(user.email);
    await t.db.query(`UPDATE password_recoveries SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [
      user.id,
    ]);

    await expect(service.confirm(user.email, code, NEW_PASSWORD)).rejects.toMatchObject(refused);
    expect(await pending()).toBeUndefined();
  });

  it('sends no code to a deactivated user, and refuses the code of one deactivated since', async () => {
    const deactivate = (active: boolean) => t.db.query('UPDATE users SET active = $2 WHERE id = $1', [user.id, active]);
    await service.request(user.email);
    const code = mail.codeFor(user.email);
    await deactivate(false);
    const before = await passwordHash();
    await expect(service.confirm(user.email, code, NEW_PASSWORD)).rejects.toMatchObject(refused);
    expect(await passwordHash()).toBe(before);
    await service.request(user.email);
    expect(mail.sent).toHaveLength(1);

    await deactivate(true);
    await service.confirm(user.email, code, NEW_PASSWORD);
    expect(await passwordHash()).not.toBe(before);
  });

  it('refuses a code for an e-mail that belongs to nobody, or for a user who asked for none', async () => {
    await expect(service.confirm('nobody-at-all@example.com', '123456', NEW_PASSWORD)).rejects.toMatchObject(refused);
    await expect(service.confirm(user.email, '123456', NEW_PASSWORD)).rejects.toMatchObject(refused);
  });
});
