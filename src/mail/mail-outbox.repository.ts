import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { deferStatement } from '../database/pipelined-client';

export interface OutboxMail {
  recipient: string;
  subject: string;
  body: string;
}

/** SQL of `mail_outbox`: mails written in the caller's transaction, then delivered by a job. */
@Injectable()
export class MailOutboxRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Writes the mail in the caller's transaction (deferred: sent with the commit); answers its id. */
  async insert(manager: EntityManager, mail: OutboxMail): Promise<string> {
    const id = randomUUID();
    await deferStatement(manager, `INSERT INTO mail_outbox (id, recipient, subject, body) VALUES ($1, $2, $3, $4)`, [
      id,
      mail.recipient,
      mail.subject,
      mail.body,
    ]);
    return id;
  }

  /** Counts a delivery attempt of a pending mail and answers it; null once it was delivered. */
  async startAttempt(id: string): Promise<OutboxMail | null> {
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows]: [OutboxMail[], number] = await this.dataSource.query(
      `UPDATE mail_outbox SET attempts = attempts + 1 WHERE id = $1 AND status = 'pending'
       RETURNING recipient, subject, body`,
      [id],
    );
    return rows[0] ?? null;
  }

  /**
   * Mails still pending that were written between `newerThanMinutes` and `olderThanMinutes` ago,
   * oldest first (at most `limit`): their delivery job gave up, or was lost.
   */
  async stuck(olderThanMinutes: number, newerThanMinutes: number, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM mail_outbox
        WHERE status = 'pending' AND created_at < now() - make_interval(mins => $1)
          AND created_at >= now() - make_interval(mins => $2)
        ORDER BY created_at LIMIT $3`,
      [olderThanMinutes, newerThanMinutes, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Gives up the pending mails written over `olderThanMinutes` ago (their body is not kept either); answers how many. */
  async failStale(olderThanMinutes: number): Promise<number> {
    const [, failed]: [unknown, number] = await this.dataSource.query(
      `UPDATE mail_outbox SET status = 'failed', body = NULL
        WHERE status = 'pending' AND created_at < now() - make_interval(mins => $1)`,
      [olderThanMinutes],
    );
    return failed;
  }

  async markLogged(id: string): Promise<void> {
    await this.dataSource.query(`UPDATE mail_outbox SET status = 'logged', sent_at = now() WHERE id = $1`, [id]);
  }

  /** Sent: the body (which may hold a one-time code) is not kept. */
  async markSent(id: string): Promise<void> {
    await this.dataSource.query(`UPDATE mail_outbox SET status = 'sent', sent_at = now(), body = NULL WHERE id = $1`, [
      id,
    ]);
  }

  async recordError(id: string, message: string): Promise<void> {
    await this.dataSource.query(`UPDATE mail_outbox SET last_error = $2 WHERE id = $1`, [id, message]);
  }
}
