import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { COUNTER_CONNECTIONS } from '../database/database.module';
import { SharedConnections } from '../database/shared-connections';
import { JobQueue } from '../jobs/job-queue.service';
import { TransactionSettlements } from '../transactions/transaction-settlements';
import { HttpMetrics } from './http-metrics';
import { MetricsRepository, OutboxBacklog } from './metrics.repository';

/**
 * Wires the business and saturation metrics: transaction status changes (a settlement listener,
 * so every status written is counted once), and the gauges read at scrape time: outbox backlog,
 * job queue depth per queue, database pool and shared connections use.
 */
@Injectable()
export class OperationsMetrics implements OnModuleInit {
  private backlog?: Promise<OutboxBacklog>;

  constructor(
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
    @Inject(MetricsRepository) private readonly repository: MetricsRepository,
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(TransactionSettlements) private readonly settlements: TransactionSettlements,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SharedConnections) private readonly shared: SharedConnections,
    @Inject(COUNTER_CONNECTIONS) private readonly counters: SharedConnections,
  ) {}

  onModuleInit(): void {
    this.settlements.subscribe({
      onTransactionSettled: async (_manager, transaction) =>
        this.metrics.transactionWritten(transaction.payment_type, transaction.status, transaction.decline_reason),
    });
    // Read first: the other gauges' queries would count themselves as pool use.
    this.metrics.gauge(
      'db_pool_connections',
      'Connections of the API database pool: in use, idle, and requests waiting for one.',
      ['state'],
      async () => {
        const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
        if (!pool) return [];
        return [
          { labels: { state: 'in_use' }, value: pool.totalCount - pool.idleCount },
          { labels: { state: 'idle' }, value: pool.idleCount },
          { labels: { state: 'waiting' }, value: pool.waitingCount },
        ];
      },
    );
    this.metrics.gauge(
      'db_shared_connections',
      'Shared connections of short statements (reads by key; rate-limit counters): connections open, and statements sent and not answered yet.',
      ['set', 'state'],
      async () =>
        (
          [
            ['reads', this.shared],
            ['counters', this.counters],
          ] as const
        ).flatMap(([set, connections]) => {
          const { open, inFlight } = connections.usage();
          return [
            { labels: { set, state: 'open' }, value: open },
            { labels: { set, state: 'in_flight' }, value: inFlight },
          ];
        }),
    );
    this.metrics.gauge('outbox_pending_events', 'Outbox events written but not dispatched yet.', [], async () => [
      { labels: {}, value: (await this.outboxBacklog()).pending },
    ]);
    this.metrics.gauge(
      'outbox_oldest_pending_age_seconds',
      'Age of the oldest outbox event not dispatched yet (0 when there is none).',
      [],
      async () => [{ labels: {}, value: (await this.outboxBacklog()).oldestAgeSeconds }],
    );
    this.metrics.gauge(
      'job_queue_jobs',
      'Jobs per queue and state: queued (ready or deferred) and active.',
      ['queue', 'state'],
      async () =>
        (await this.jobs.depths()).flatMap((q) => [
          { labels: { queue: q.name, state: 'queued' }, value: q.queued },
          { labels: { queue: q.name, state: 'active' }, value: q.active },
        ]),
    );
  }

  /** One query per scrape for both outbox gauges. */
  private outboxBacklog(): Promise<OutboxBacklog> {
    this.backlog ??= this.repository.outboxBacklog().finally(() => (this.backlog = undefined));
    return this.backlog;
  }
}
