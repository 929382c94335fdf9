import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { createTransport, Transporter } from 'nodemailer';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobQueue } from '../jobs/job-queue.service';
import { MailOutboxRepository } from './mail-outbox.repository';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

const SEND_MAIL = 'mail.send';
const RESEND_STUCK = 'mail.resend-stuck';
/** A delivery job retries for about an hour; a mail still pending after this long is sent again by a sweep. */
const STUCK_AFTER_MINUTES = 120;
/** A mail not delivered within a day is given up (`failed`): what it says is stale by then. */
const GIVE_UP_AFTER_MINUTES = 24 * 60;
const RESEND_BATCH = 100;

/**
 * E-mail through an outbox: a mail is written to `mail_outbox` with a delivery job in the
 * caller's transaction, and a worker sends it over SMTP (`SMTP_URL`), retrying on failure.
 * Without SMTP_URL the worker writes it to the log instead, and the outbox row keeps it.
 */
@Injectable()
export class MailService implements OnModuleInit {
  private readonly logger = new Logger('Mail');
  private transport?: Transporter;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly jobs: JobQueue,
    private readonly outbox: MailOutboxRepository,
  ) {}

  onModuleInit(): void {
    if (this.config.smtpUrl) this.transport = createTransport(this.config.smtpUrl);
    this.jobs.define<{ id: string }>({
      name: SEND_MAIL,
      handler: ({ id }) => this.deliver(id),
      queue: { retryLimit: 8, retryDelay: 15, retryBackoff: true },
      pollingIntervalSeconds: 1,
    });
    this.jobs.define({
      name: RESEND_STUCK,
      schedule: '*/15 * * * *',
      handler: async () => {
        await this.resendStuck();
      },
    });
  }

  async queue(manager: EntityManager, mail: OutgoingMail): Promise<void> {
    const id = await this.outbox.insert(manager, { recipient: mail.to, subject: mail.subject, body: mail.text });
    await this.jobs.send(SEND_MAIL, { id }, {}, manager);
  }

  /**
   * Sends again the mails still pending after their delivery job gave up (an SMTP server down for
   * longer than its retries), and gives up those not delivered within a day. Answers how many
   * were delivered now.
   */
  async resendStuck(): Promise<number> {
    const failed = await this.outbox.failStale(GIVE_UP_AFTER_MINUTES);
    if (failed > 0) this.logger.error({ failed }, 'E-mails not delivered within a day were given up');
    let delivered = 0;
    for (const id of await this.outbox.stuck(STUCK_AFTER_MINUTES, GIVE_UP_AFTER_MINUTES, RESEND_BATCH)) {
      try {
        await this.deliver(id);
        delivered++;
      } catch (error) {
        this.logger.warn({ err: error, mail: id }, 'An e-mail could not be sent again; tried again later');
      }
    }
    return delivered;
  }

  private async deliver(id: string): Promise<void> {
    const mail = await this.outbox.startAttempt(id);
    if (!mail) return; // already delivered
    if (!this.transport) {
      this.logger.log(
        { mail: { to: mail.recipient, subject: mail.subject, body: mail.body } },
        'E-mail (no SMTP_URL: logged, not sent)',
      );
      await this.outbox.markLogged(id);
      return;
    }
    try {
      await this.transport.sendMail({
        from: this.config.mailFrom,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.body,
      });
    } catch (error) {
      await this.outbox.recordError(id, String((error as Error).message));
      throw error;
    }
    await this.outbox.markSent(id);
  }
}
