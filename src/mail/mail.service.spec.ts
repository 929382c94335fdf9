import { TestSmtpServer } from '../../test/support/smtp';
import { startTestApp, TestApp } from '../../test/support/test-app';
import { MailService } from './mail.service';

describe('MailService: mails whose delivery job gave up', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    smtp = new TestSmtpServer();
    await smtp.start();
    t = await startTestApp({ env: { SMTP_URL: smtp.url } });
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  /** A pending mail written `minutesAgo`, as one whose delivery job ran out of retries leaves it. */
  const pendingMail = async (to: string, minutesAgo: number): Promise<string> => {
    const { rows } = await t.db.query(
      `INSERT INTO mail_outbox (recipient, subject, body, attempts, last_error, created_at)
       VALUES ($1, 'Your tickets', 'Ticket ABC', 9, 'connect ECONNREFUSED', now() - make_interval(mins => $2))
       RETURNING id`,
      [to, minutesAgo],
    );
    return rows[0].id;
  };
  const stored = async (id: string) =>
    (await t.db.query('SELECT status, body, attempts FROM mail_outbox WHERE id = $1', [id])).rows[0];

  it('sends again the mails pending for hours, gives up those over a day old, and leaves recent ones to their job', async () => {
    const stuck = await pendingMail('stuck@example.com', 3 * 60);
    const stale = await pendingMail('stale@example.com', 25 * 60);
    const recent = await pendingMail('recent@example.com', 10);
    const since = smtp.received.length;

    expect(await t.app.get(MailService).resendStuck()).toBe(1);

    expect((await smtp.waitForMail('stuck@example.com', since)).raw).toContain('Subject: Your tickets');
    expect(await stored(stuck)).toEqual({ status: 'sent', body: null, attempts: 10 });
    expect(await stored(stale)).toEqual({ status: 'failed', body: null, attempts: 9 });
    expect(await stored(recent)).toMatchObject({ status: 'pending', attempts: 9 });
    expect(smtp.received.slice(since).map((mail) => mail.to)).toEqual([['stuck@example.com']]);

    // Delivered: never sent twice.
    expect(await t.app.get(MailService).resendStuck()).toBe(0);
    expect(smtp.received.length).toBe(since + 1);
  });

  // Last: the SMTP server stays down.
  it('keeps a mail pending while the SMTP server is still down, to be tried again next run', async () => {
    const stuck = await pendingMail('refused@example.com', 3 * 60);
    await smtp.stop();
    expect(await t.app.get(MailService).resendStuck()).toBe(0);
    expect(await stored(stuck)).toMatchObject({ status: 'pending', body: 'Ticket ABC', attempts: 10 });
  });
});
