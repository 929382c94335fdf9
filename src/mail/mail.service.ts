import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createTransport, Transporter } from 'nodemailer';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobQueue } from '../jobs/job-queue.service';

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
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const [row]: Array<{ id: string }> = await manager.query(
      `INSERT INTO mail_outbox (recipient, subject, body) VALUES ($1, $2, $3) RETURNING id`,
      [mail.to, mail.subject, mail.text],
    );
    await this.jobs.send(SEND_MAIL, { id: row.id }, {}, manager);
  }

  private async deliver(id: string): Promise<void> {
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows]: [Array<{ recipient: string; subject: string; body: string }>, number] = await this.dataSource.query(
      `UPDATE mail_outbox SET attempts = attempts + 1 WHERE id = $1 AND status = 'pending'
       RETURNING recipient, subject, body`,
      [id],
    );
    if (rows.length === 0) return; // already delivered
    const mail = rows[0];
    if (!this.transport) {
      this.logger.log(
        { mail: { to: mail.recipient, subject: mail.subject, body: mail.body } },
        'E-mail (no SMTP_URL: logged, not sent)',
      );
      await this.dataSource.query(`UPDATE mail_outbox SET status = 'logged', sent_at = now() WHERE id = $1`, [id]);
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
      await this.dataSource.query(`UPDATE mail_outbox SET last_error = $2 WHERE id = $1`, [
        id,
        String((error as Error).message),
      ]);
      throw error;
    }
    // Sent: the body (which may hold a one-time code) is not kept.
    await this.dataSource.query(`UPDATE mail_outbox SET status = 'sent', sent_at = now(), body = NULL WHERE id = $1`, [
      id,
    ]);
  }
}
