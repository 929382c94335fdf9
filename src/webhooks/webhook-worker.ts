import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JobQueue, RUN_WORKERS } from '../jobs/job-queue.service';
import { MailService } from '../mail/mail.service';
import { SellersService } from '../sellers/sellers.service';
import { decideOutcome, describeFailure, DISABLE_AFTER_FAILING_MS, SINGLE_ATTEMPT_STEP } from './delivery-policy';
import { webhookHeaders } from './signing';
import { checkWebhookUrlSyntax } from './url-safety';
import { SendResult, WebhookTransport } from './webhook-transport';
import { WEBHOOK_RESOLVER } from './webhooks.service';
import type { ResolveHost } from './webhook-transport';
import {
  AttemptRecord,
  ClaimedDelivery,
  DELIVERIES_CHANNEL,
  OUTBOX_CHANNEL,
  WebhooksRepository,
} from './webhooks.repository';

const DISPATCH_BATCH = 500;
const CLAIM_BATCH = 100;
/** The longest a worker sleeps without a notification (a safety net for lost notifications). */
const IDLE_CHECK_MS = 5_000;
/** Attempt records written per statement, and how long a finished attempt may wait for company. */
const FLUSH_BATCH = 50;
const FLUSH_DELAY_MS = 5;
/** How soon a disabling that failed is tried again. */
const DISABLE_RETRY_MS = 1_000;
const GONE = 'The receiver answered 410 Gone.';
const FAILING_FOR_DAYS = 'Every delivery has failed for 5 days.';
export const RETENTION_JOB = 'webhooks.retention';
export const DELIVERY_RETENTION_DAYS = 30;
export const EVENT_RETENTION_DAYS = 90;

/**
 * Delivers webhooks, in every process that runs workers (the API with WORKERS_IN_API, and
 * `npm run worker`). Committed outbox events NOTIFY the workers, which fan them out into
 * deliveries (dispatcher) and claim due deliveries (FOR UPDATE SKIP LOCKED, with a lease) to
 * send them through one pool of sockets, at most WEBHOOKS_CONCURRENCY at a time per process,
 * WEBHOOKS_ENDPOINT_CONCURRENCY per endpoint and WEBHOOKS_SELLER_CONCURRENCY per seller (so that
 * one seller's slow endpoints never take every request a worker has). Retries wake the worker at
 * their due time.
 * A worker that dies mid-request loses nothing: its lease ends and another worker sends again.
 */
@Injectable()
export class WebhookWorker implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private transport?: WebhookTransport;
  private listener?: Client;
  private inFlight = 0;
  private pumping = false;
  private pumpAgain = false;
  private dispatching = false;
  private dispatchAgain = false;
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private stopped = false;
  private readonly completions: Array<{ record: AttemptRecord; gone: boolean }> = [];
  /** Endpoints to disable whose disabling failed (a deadlock, the database away): tried again at the next flush. */
  private readonly disablesLeft = new Map<string, Disabling>();
  private flushTimer?: NodeJS.Timeout;
  private flushing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(RUN_WORKERS) private readonly runWorkers: boolean,
    @Inject(WebhooksRepository) private readonly webhooks: WebhooksRepository,
    @Inject(JobQueue) private readonly jobs: JobQueue,
    @Inject(MailService) private readonly mail: MailService,
    @Inject(SellersService) private readonly sellers: SellersService,
    @Inject(WEBHOOK_RESOLVER) private readonly resolve: ResolveHost,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  private get leaseMs(): number {
    return this.config.webhooksTimeoutSeconds * 1000 + 5_000;
  }

  onModuleInit(): void {
    this.jobs.define({
      name: RETENTION_JOB,
      schedule: '17 3 * * *',
      handler: async () => void (await this.purgeOld()),
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.runWorkers) return;
    this.transport = new WebhookTransport({
      allowPrivate: this.config.webhooksAllowPrivateUrls,
      timeoutMs: this.config.webhooksTimeoutSeconds * 1000,
      // As many sockets per host as the worker may have requests in flight: endpoints of one host
      // (paths of one receiving service, other sellers' included) never queue behind each other's
      // requests. The per-endpoint cap is the claim's (WEBHOOKS_ENDPOINT_CONCURRENCY).
      connectionsPerOrigin: this.config.webhooksConcurrency,
      resolve: this.resolve,
    });
    await this.listen();
    this.wake();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.listener?.end().catch(() => undefined);
    const deadline = Date.now() + this.leaseMs;
    while ((this.inFlight > 0 || this.completions.length > 0 || this.flushing) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    clearTimeout(this.flushTimer); // disablings left to retry: the database is going away
    await this.transport?.close().catch(() => undefined);
  }

  /** Deletes deliveries (with attempts) older than 30 days and dispatched events older than 90. */
  async purgeOld(): Promise<{ deliveries: number; events: number }> {
    const total = { deliveries: 0, events: 0 };
    for (;;) {
      const purged = await this.webhooks.purge(DELIVERY_RETENTION_DAYS, EVENT_RETENTION_DAYS, 5_000);
      total.deliveries += purged.deliveries;
      total.events += purged.events;
      if (purged.deliveries < 5_000 && purged.events < 5_000) break;
    }
    if (total.deliveries || total.events) this.logger.log(total, 'Webhook retention: old deliveries and events purged');
    return total;
  }

  /** A dedicated connection LISTENs for committed events and new deliveries; it reconnects when lost. */
  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'payments-webhooks' });
    client.on('notification', (message) => (message.channel === OUTBOX_CHANNEL ? this.wake() : void this.pump()));
    client.on('error', (error) => {
      if (this.stopped) return;
      this.logger.warn({ err: error }, 'Webhook listener lost its connection; reconnecting');
      this.listener = undefined;
      setTimeout(() => void this.reconnect(), 1_000);
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_CHANNEL}; LISTEN ${DELIVERIES_CHANNEL}`);
    this.listener = client;
  }

  private async reconnect(): Promise<void> {
    if (this.stopped || this.listener) return;
    try {
      await this.listen();
      this.wake(); // anything committed while disconnected
    } catch {
      setTimeout(() => void this.reconnect(), 2_000);
    }
  }

  /** Fan out new events, then send what is due. */
  private wake(): void {
    void this.dispatch().then(() => this.pump());
  }

  private async dispatch(): Promise<void> {
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = true;
    try {
      do {
        this.dispatchAgain = false;
        let batch;
        do batch = await this.webhooks.dispatchBatch(DISPATCH_BATCH);
        while (batch.events === DISPATCH_BATCH && !this.stopped);
      } while (this.dispatchAgain && !this.stopped);
    } catch (error) {
      this.logger.error({ err: error }, 'Webhook dispatch failed; retrying shortly');
      this.armTimer(new Date(Date.now() + 1_000));
    } finally {
      this.dispatching = false;
    }
  }

  /** Claims due deliveries while there are free slots, and starts sending them. */
  private async pump(): Promise<void> {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    let idle = false;
    let claimedFrom = new Date();
    try {
      do {
        this.pumpAgain = false;
        const free = Math.min(this.config.webhooksConcurrency - this.inFlight, CLAIM_BATCH);
        if (free <= 0) break;
        claimedFrom = new Date();
        const claimed = await this.webhooks.claimDue(free, this.leaseMs, {
          perEndpoint: this.config.webhooksEndpointConcurrency,
          perSeller: this.config.webhooksSellerConcurrency,
        });
        for (const delivery of claimed) this.start(delivery);
        // Claimed some: claim again while slots are free. A seller or endpoint that reached its cap
        // in this claim may have filled the claim's window of due deliveries with ones it could
        // not take, hiding other sellers' behind them; the next claim leaves it out. (At a quiet
        // time this costs one claim that finds nothing.)
        if (claimed.length > 0) this.pumpAgain = true;
        else idle = true;
      } while (this.pumpAgain && !this.stopped);
    } catch (error) {
      this.logger.error({ err: error }, 'Claiming webhook deliveries failed; retrying shortly');
      this.armTimer(new Date(Date.now() + 1_000));
    } finally {
      this.pumping = false;
    }
    if (idle && !this.stopped) await this.scheduleNextWakeUp(claimedFrom);
  }

  /** Arms the alarm for the next due time after the claim begun at `claimedFrom` (see nextWakeUp). */
  private async scheduleNextWakeUp(claimedFrom: Date): Promise<void> {
    try {
      const at = await this.webhooks.nextWakeUp(claimedFrom);
      this.armTimer(at ?? new Date(Date.now() + IDLE_CHECK_MS));
    } catch (error) {
      this.logger.warn({ err: error }, 'Could not read the next webhook due time');
      this.armTimer(new Date(Date.now() + 1_000));
    }
  }

  /** Sets the alarm to `at` (capped at IDLE_CHECK_MS), unless one rings earlier already. */
  private armTimer(at: Date): void {
    const when = Math.min(at.getTime(), Date.now() + IDLE_CHECK_MS);
    if (this.timer && this.timerAt <= when && this.timerAt > Date.now()) return;
    clearTimeout(this.timer);
    this.timerAt = when;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        this.wake();
      },
      Math.max(0, when - Date.now()),
    );
    this.timer.unref();
  }

  private start(delivery: ClaimedDelivery): void {
    this.inFlight++;
    this.attempt(delivery)
      .catch((error: unknown) => this.logger.error({ err: error, delivery: delivery.id }, 'Webhook attempt failed'))
      .finally(() => this.inFlight--);
  }

  /** One attempt: sign, send, and queue its record with the delivery's next state. */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const body = JSON.stringify({
      id: delivery.event_id,
      type: delivery.event_type,
      created_at: delivery.event_created_at,
      data: delivery.event_data,
    });
    const startedAt = new Date();
    const result = await this.send(delivery, startedAt, body);
    const outcome = decideOutcome(result, delivery.schedule_step, {
      scale: this.config.webhooksRetryScale,
      now: Date.now(),
      resumeAt: delivery.resume_at,
    });
    this.completions.push({
      record: {
        deliveryId: delivery.id,
        attempt: delivery.attempt,
        startedAt,
        durationMs: result.durationMs,
        responseStatus: result.kind === 'response' ? result.status : null,
        responseBody: result.responseBody,
        error: describeFailure(result),
        status: outcome.status,
        scheduleStep: outcome.status === 'pending' ? outcome.scheduleStep : delivery.schedule_step,
        delayMs: outcome.status === 'pending' ? outcome.delayMs : 0,
      },
      gone: outcome.status === 'failed' && outcome.disableEndpoint,
    });
    this.scheduleFlush();
  }

  /** Attempts are recorded in batches (one statement for many), a few milliseconds after they end. */
  private scheduleFlush(): void {
    if (this.flushing || this.flushTimer) return;
    if (this.completions.length === 0 && this.stopped) return; // disablings left wait for the next start
    const delay =
      this.completions.length >= FLUSH_BATCH ? 0 : this.completions.length > 0 ? FLUSH_DELAY_MS : DISABLE_RETRY_MS;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, delay);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const batch = this.completions.splice(0, FLUSH_BATCH * 4);
    try {
      const recorded =
        batch.length === 0
          ? []
          : await this.webhooks.completeAttempts(
              batch.map((c) => c.record),
              SINGLE_ATTEMPT_STEP,
            );
      const byDelivery = new Map(recorded.map((r) => [r.deliveryId, r]));
      for (const { record, gone } of batch) {
        const done = byDelivery.get(record.deliveryId);
        if (!done || record.status === 'succeeded') continue; // claim lost, or fine
        if (gone) this.disablesLeft.set(done.endpointId, { reason: GONE, failingForMs: null });
        // A delivery that has used up its attempts, on an endpoint failing since before it: the
        // endpoint is disabled if no attempt to it has succeeded for 5 days (checked as it is).
        // Each delivery gets its whole schedule first, however long the endpoint has failed.
        else if (done.status === 'failed' && done.failingSince && !this.disablesLeft.has(done.endpointId)) {
          this.disablesLeft.set(done.endpointId, {
            reason: FAILING_FOR_DAYS,
            failingForMs: DISABLE_AFTER_FAILING_MS * this.config.webhooksRetryScale,
          });
        }
      }
    } catch (error) {
      this.logger.error({ err: error }, 'Recording webhook attempts failed; retrying shortly');
      this.completions.unshift(...batch);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    for (const [endpointId, disabling] of [...this.disablesLeft]) {
      try {
        await this.disable(endpointId, disabling);
        this.disablesLeft.delete(endpointId);
      } catch (error) {
        this.logger.error(
          { err: error, endpoint: endpointId },
          'Disabling a webhook endpoint failed; retrying shortly',
        );
      }
    }
    this.flushing = false;
    if (this.completions.length > 0 || this.disablesLeft.size > 0) this.scheduleFlush();
    void this.pump();
  }

  private async send(delivery: ClaimedDelivery, startedAt: Date, body: string): Promise<SendResult> {
    // The URL passed these checks when stored; the configuration may have changed since.
    const syntax = checkWebhookUrlSyntax(delivery.url, this.config.webhooksAllowPrivateUrls);
    if (!syntax.ok)
      return { kind: 'error', message: `Address not allowed: ${syntax.reason}`, responseBody: null, durationMs: 0 };
    return this.transport!.send(
      delivery.url,
      webhookHeaders(delivery.secrets, delivery.event_id, startedAt, body),
      body,
    );
  }

  /** Disables the endpoint, fails its pending deliveries and e-mails its seller, in one transaction. */
  private async disable(endpointId: string, { reason, failingForMs }: Disabling): Promise<void> {
    const disabled = await this.dataSource.transaction(async (manager) => {
      const endpoint = await this.webhooks.disableEndpoint(manager, endpointId, reason, failingForMs);
      if (!endpoint) return false; // already disabled by another worker, or it has succeeded since
      await this.webhooks.failPendingDeliveries(manager, endpointId, `Endpoint disabled: ${reason}`);
      const seller = await this.sellers.find(endpoint.seller_id);
      await this.mail.queue(manager, {
        to: seller.email,
        subject: 'Your webhook endpoint was disabled',
        text:
          `We disabled your webhook endpoint ${endpoint.url} (id ${endpointId}): ${reason}\n\n` +
          `Fix the receiver, reactivate the endpoint with PATCH /integrations/webhooks/${endpointId}/ ` +
          `{"active": true}, then send the missed events again with POST /integrations/webhooks/${endpointId}/replay/ ` +
          `{"since": "<when it started failing>"}.`,
      });
      return true;
    });
    if (disabled) this.logger.warn({ endpoint: endpointId, reason }, 'Webhook endpoint disabled');
  }
}

/**
 * Why an endpoint is disabled; for failures, how long its failure streak must have gone on, checked
 * again as it is disabled (an attempt of another worker may have succeeded meanwhile).
 */
interface Disabling {
  reason: string;
  failingForMs: number | null;
}
