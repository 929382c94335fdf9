import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { PgBoss, type Job, type QueueOptions, type SendOptions } from 'pg-boss';
import { EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { poolOptions } from '../database/pg-options';
import { deferStatement } from '../database/pipelined-client';

/** At most one queue error is logged in this time (the others are counted). */
const ERROR_LOG_INTERVAL_MS = 30_000;

export const RUN_WORKERS = Symbol('RUN_WORKERS');

export interface JobDefinition<T extends object = object> {
  name: string;
  handler: (data: T) => Promise<void>;
  /** Cron expression (UTC): the job runs on that schedule. */
  schedule?: string;
  queue?: QueueOptions;
  /** Jobs of this queue handled at once by one process. */
  concurrency?: number;
  /** How often an idle worker looks for jobs (default 2 s). */
  pollingIntervalSeconds?: number;
}

/**
 * Background work on a PostgreSQL-backed queue (pg-boss) in the service's own database.
 * Modules define their jobs while the application initialises; workers run in the API
 * process (WORKERS_IN_API) or in `npm run worker` processes. Any process can send jobs.
 */
@Injectable()
export class JobQueue implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Jobs');
  private readonly definitions = new Map<string, JobDefinition>();
  private boss?: PgBoss;
  private stopping = false;
  /** When the last queue error was logged, and how many came since (see onQueueError). */
  private errorLoggedAt = 0;
  private errorsUnlogged = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RUN_WORKERS) private readonly runWorkers: boolean,
  ) {}

  define<T extends object>(definition: JobDefinition<T>): void {
    if (this.boss) throw new Error(`Job ${definition.name} defined after the queue started`);
    this.definitions.set(definition.name, definition as unknown as JobDefinition);
  }

  async onApplicationBootstrap(): Promise<void> {
    const boss = new PgBoss({
      ...poolOptions({ queryTimeoutSeconds: this.config.databaseQueryTimeout }),
      connectionString: this.config.databaseUrl,
      application_name: 'payments-jobs',
      max: 3,
      schedule: this.runWorkers,
      supervise: this.runWorkers,
    });
    // While stopping, connection errors are expected (Ctrl-C also stops an embedded database).
    boss.on('error', (error) => this.onQueueError(error));
    await boss.start();
    this.boss = boss;
    for (const definition of this.definitions.values()) {
      if (!(await boss.getQueue(definition.name))) await boss.createQueue(definition.name, definition.queue);
      if (!this.runWorkers) continue;
      await boss.work<object>(
        definition.name,
        {
          batchSize: 1,
          localConcurrency: definition.concurrency ?? 1,
          pollingIntervalSeconds: definition.pollingIntervalSeconds ?? 2,
        },
        async ([job]: Job<object>[]) => definition.handler(job.data),
      );
      if (definition.schedule) await boss.schedule(definition.name, definition.schedule, null, { tz: 'UTC' });
    }
    this.logger.log(`Job queue started${this.runWorkers ? ' with workers' : ' (send only)'}`);
  }

  /**
   * Queues a job. With `manager`, the job is written in that database transaction: it exists if
   * and only if the transaction commits. Its insert is then sent with the commit (deferred, with
   * the job's id made here), unless a singleton option may skip that insert: then it is waited
   * for, and null answers a job not queued. (Queues are created with the standard policy, which
   * skips nothing: JobDefinition's QueueOptions has no policy.)
   */
  async send<T extends object>(
    name: string,
    data: T,
    options: SendOptions = {},
    manager?: EntityManager,
  ): Promise<string | null> {
    if (!this.boss) throw new Error('The job queue is not started');
    if (!manager) return this.boss.send(name, data, options);
    const id = options.id ?? randomUUID();
    const conditional = options.singletonKey !== undefined || options.singletonSeconds !== undefined;
    const db = {
      executeSql: async (text: string, values: unknown[] = []) => {
        if (conditional) return { rows: await manager.query(text, values) };
        await deferStatement(manager, text, values);
        return { rows: [{ id }] };
      },
    };
    return this.boss.send(name, data, { ...options, id, db });
  }

  /** Jobs waiting (queued, deferred included) and running, per queue of this service. */
  async depths(): Promise<Array<{ name: string; queued: number; active: number }>> {
    if (!this.boss) return [];
    const queues = await this.boss.getQueues([...this.definitions.keys()]);
    return queues.map((q) => ({ name: q.name, queued: q.queuedCount, active: q.activeCount }));
  }

  /**
   * pg-boss reports every failed poll: while the database is unreachable that is several a
   * second. One is logged per ERROR_LOG_INTERVAL_MS, with the number left unlogged since.
   */
  private onQueueError(error: unknown): void {
    if (this.stopping) {
      this.logger.debug({ err: error }, 'Job queue error while stopping');
      return;
    }
    const now = Date.now();
    if (now - this.errorLoggedAt < ERROR_LOG_INTERVAL_MS) {
      this.errorsUnlogged++;
      return;
    }
    this.logger.warn({ err: error, errors_unlogged: this.errorsUnlogged }, 'Job queue error');
    this.errorLoggedAt = now;
    this.errorsUnlogged = 0;
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.boss?.stop({ graceful: true, timeout: 10_000 });
    this.boss = undefined;
  }
}
