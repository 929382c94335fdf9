import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import type { TransactionRollbackEvent } from 'typeorm/subscriber/event/TransactionRollbackEvent';
import { OUTBOX_CHANNEL } from './webhooks.repository';

const WROTE_EVENTS = 'outboxEventsWritten';

/** Marks the caller's transaction as one that wrote outbox events (see OutboxSignal). */
export function markOutboxWritten(manager: EntityManager): void {
  manager.queryRunner!.data[WROTE_EVENTS] = true;
}

function takeMark(runner: QueryRunner): boolean {
  const marked = runner.data?.[WROTE_EVENTS] === true;
  if (marked) delete runner.data[WROTE_EVENTS];
  return marked;
}

/**
 * Wakes the webhook workers of every process once outbox events have committed: a NOTIFY on
 * the outbox channel, sent after the commit and outside its transaction, at most one at a time
 * per process (the commits made meanwhile share the next one).
 *
 * A NOTIFY inside the transaction (the trigger this replaces) makes PostgreSQL serialise the
 * commits of all notifying transactions, through their WAL flushes, on one database-wide lock:
 * under load every request that records an event waited for the others' disk writes. A signal
 * lost to a crash between commit and NOTIFY delays nothing for long: workers also look for
 * events on their own every few seconds.
 */
@Injectable()
export class OutboxSignal implements EntitySubscriberInterface {
  private readonly logger = new Logger('Webhooks');
  private sending = false;
  private again = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    dataSource.subscribers.push(this);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (takeMark(event.queryRunner)) this.signal();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    takeMark(event.queryRunner);
  }

  private signal(): void {
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    this.again = false;
    this.dataSource
      .query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL])
      .catch((error: unknown) => this.logger.warn({ err: error }, 'Could not signal new outbox events'))
      .finally(() => {
        this.sending = false;
        if (this.again) this.signal();
      });
  }
}
