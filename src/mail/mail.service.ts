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
  }

  async queue(manager: EntityManager, mail: OutgoingMail): Promise<void> {
    const id = await this.outbox.insert(manager, { recipient: mail.to, subject: mail.subject, body: mail.text });
    await this.jobs.send(SEND_MAIL, { id }, {}, manager);
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
