import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import type { TransactionCommitEvent } from 'typeorm/subscriber/event/TransactionCommitEvent';
import type { TransactionRollbackEvent } from 'typeorm/subscriber/event/TransactionRollbackEvent';
import { OUTBOX_CHANNEL } from './webhooks.repository';

const WROTE_EVENTS = 'outboxEventsWritten';
/** How long a signal waits for company: under load, one NOTIFY per this many milliseconds at most. */
const SIGNAL_DELAY_MS = 5;

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
 * the outbox channel, sent shortly after the commit and outside its transaction, shared by the
 * commits of the same few milliseconds.
 *
 * A NOTIFY inside the transaction (the trigger this replaces) makes PostgreSQL serialise the
 * commits of all notifying transactions, through their WAL flushes, on one database-wide lock:
 * under load every request that records an event waited for the others' disk writes. A signal
 * lost to a crash between commit and NOTIFY delays nothing for long: workers also look for
 * events on their own every few seconds.
 */
@Injectable()
export class OutboxSignal implements EntitySubscriberInterface, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private timer: NodeJS.Timeout | undefined;
  /** The NOTIFY being sent, if any: a shutdown waits for it. */
  private sending: Promise<void> | undefined;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    dataSource.subscribers.push(this);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    if (takeMark(event.queryRunner)) this.signal();
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    takeMark(event.queryRunner);
  }

  /**
   * A signal still waiting goes out before the database connections close: a command-line job
   * (`orders:expire`, `subscriptions:renew`) stops right after its last commit, and its events
   * must wake the workers then, not at their next look.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** Again for commits made while other parts stopped (a job finishing). */
  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** The first commit arms a short timer; every commit until it rings shares its NOTIFY. */
  private signal(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.notify(), SIGNAL_DELAY_MS).unref();
  }

  /** Sends a signal still waiting at once, and waits for one being sent. */
  private async flush(): Promise<void> {
    if (this.timer) void this.notify();
    await this.sending;
  }

  private notify(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dataSource.isInitialized) return Promise.resolve(); // closed: the workers look on their own at start-up
    const sending = this.dataSource
      .query(`SELECT pg_notify($1, '')`, [OUTBOX_CHANNEL])
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn({ err: error }, 'Could not signal new outbox events'))
      .finally(() => {
        if (this.sending === sending) this.sending = undefined;
      });
    this.sending = sending;
    return sending;
  }
}
