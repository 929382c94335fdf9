import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { recordAudit } from '../audit/audit-log';
import {
  BadRequestError,
  ConflictError,
  FieldErrors,
  NotFoundError,
  ValidationError,
} from '../common/errors/api-error';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { instantOf } from '../common/validation/date-time.decorator';
import { APP_CONFIG, AppConfig } from '../config/config';
import { SINGLE_ATTEMPT_STEP } from './delivery-policy';
import {
  AttemptResponseDto,
  CreatedWebhookResponseDto,
  CreateWebhookDto,
  DeliveryListQueryDto,
  DeliveryResponseDto,
  EventListQueryDto,
  EventResponseDto,
  EventTypeDto,
  ReplayWebhookDto,
  UpdateWebhookDto,
  WebhookResponseDto,
  WebhookSecretResponseDto,
} from './dto/webhook.dto';
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES, EventType, recordEventNow } from './outbox';
import { generateWebhookSecret } from './signing';
import { checkWebhookUrlSyntax, refusedResolution, urlFormProblem } from './url-safety';
import { ResolveHost } from './webhook-transport';
import { EndpointRow, Updatable, WebhooksRepository } from './webhooks.repository';

export const MAX_ENDPOINTS_PER_SELLER = 16;
/** How long a retired secret keeps signing, each on its own (a second rotation does not cut the first one's day short). */
export const SECRET_OVERLAP_HOURS = 24;
/** Retired secrets that sign at once, at most (the newest): each adds a signature to every request's header. */
export const MAX_RETIRED_SECRETS = 10;
export const WEBHOOK_RESOLVER = Symbol('WEBHOOK_RESOLVER');

/**
 * Webhook endpoints of a seller, managed with the seller's API key (API.md section 5), and
 * the seller's view of deliveries and events. Every change is one database transaction with
 * its audit row; delivery itself is the worker's (webhook-worker.ts).
 */
@Injectable()
export class WebhooksService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(WebhooksRepository) private readonly webhooks: WebhooksRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_RESOLVER) private readonly resolve: ResolveHost,
  ) {}

  async create(sellerId: string, input: CreateWebhookDto): Promise<CreatedWebhookResponseDto> {
    const events = checkEventTypes('events', input.events, true);
    const url = await this.checkUrl(input.url);
    const secret = generateWebhookSecret();
    return requestTransaction(this.dataSource, async (manager) => {
      await this.webhooks.lockSellerEndpoints(manager, sellerId);
      if ((await this.webhooks.countForSeller(manager, sellerId)) >= MAX_ENDPOINTS_PER_SELLER) {
        throw new ConflictError(
          'webhook_limit_reached',
          `A seller can have at most ${MAX_ENDPOINTS_PER_SELLER} webhook endpoints; delete one first.`,
        );
      }
      const created = await this.webhooks.insertEndpoint(manager, {
        sellerId,
        url,
        events,
        description: input.description ?? '',
        active: input.active ?? true,
        secret,
      });
      await recordAudit(manager, {
        action: 'webhook.created',
        sellerId,
        target: { type: 'webhook', id: created.id },
        changes: { url, events, active: created.active, description: created.description },
      });
      return { ...WebhookResponseDto.of(created), secret };
    });
  }

  async list(sellerId: string, page: PageRequest): Promise<Page<WebhookResponseDto>> {
    return toPage(await this.webhooks.listEndpoints(sellerId, page), page, (r) => r.seq, WebhookResponseDto.of);
  }

  async get(sellerId: string, id: string): Promise<WebhookResponseDto> {
    return WebhookResponseDto.of(await this.find(sellerId, id));
  }

  async update(sellerId: string, id: string, input: UpdateWebhookDto): Promise<WebhookResponseDto> {
    const changes: Updatable = {};
    if (input.events !== undefined) changes.events = checkEventTypes('events', input.events, true);
    if (input.url !== undefined) changes.url = await this.checkUrl(input.url);
    if (input.description !== undefined) changes.description = input.description;
    if (input.active !== undefined) changes.active = input.active;
    return requestTransaction(this.dataSource, async (manager) => {
      const before = await this.webhooks.lockEndpoint(manager, sellerId, id);
      if (!before) throw notFound();
      const diff = differences(before, changes);
      if (Object.keys(diff).length === 0) return WebhookResponseDto.of(before);
      const after = await this.webhooks.updateEndpoint(manager, id, changes);
      if (changes.active === false && before.active) {
        await this.webhooks.failPendingDeliveries(manager, id, 'Endpoint deactivated before this delivery was sent.');
      }
      await recordAudit(manager, {
        action: 'webhook.changed',
        sellerId,
        target: { type: 'webhook', id },
        changes: diff,
      });
      return WebhookResponseDto.of(after);
    });
  }

  async remove(sellerId: string, id: string): Promise<void> {
    await requestTransaction(this.dataSource, async (manager) => {
      const endpoint = await this.webhooks.lockEndpoint(manager, sellerId, id);
      if (!endpoint) throw notFound();
      await this.webhooks.softDeleteEndpoint(manager, id);
      await this.webhooks.failPendingDeliveries(manager, id, 'Endpoint deleted before this delivery was sent.');
      // What was deleted, as its creation recorded it (never the secret).
      const { url, events, active, description } = WebhookResponseDto.of(endpoint);
      await recordAudit(manager, {
        action: 'webhook.deleted',
        sellerId,
        target: { type: 'webhook', id },
        changes: { url, events, active, description },
      });
    });
  }

  async rotateSecret(sellerId: string, id: string): Promise<WebhookSecretResponseDto> {
    const secret = generateWebhookSecret();
    return requestTransaction(this.dataSource, async (manager) => {
      if (!(await this.webhooks.lockEndpoint(manager, sellerId, id))) throw notFound();
      await this.webhooks.rotateSecret(manager, id, secret, SECRET_OVERLAP_HOURS, MAX_RETIRED_SECRETS);
      await recordAudit(manager, {
        action: 'webhook.secret_rotated',
        sellerId,
        target: { type: 'webhook', id },
        changes: { previous_secret_valid_for_hours: SECRET_OVERLAP_HOURS },
      });
      return { id, secret };
    });
  }

  /** Records a `webhook.test` event and delivers it to this endpoint only. */
  async sendTest(sellerId: string, id: string): Promise<DeliveryResponseDto> {
    return requestTransaction(this.dataSource, async (manager) => {
      const endpoint = await this.activeEndpoint(manager, sellerId, id);
      const event = await recordEventNow(manager, 'webhook.test', sellerId, {
        webhook: WebhookResponseDto.of(endpoint),
      });
      await this.webhooks.markEventDispatched(manager, event.id);
      return DeliveryResponseDto.of(await this.webhooks.insertDelivery(manager, id, event.id, event.type));
    });
  }

  async listDeliveries(
    sellerId: string,
    id: string,
    query: DeliveryListQueryDto,
    page: PageRequest,
  ): Promise<Page<DeliveryResponseDto>> {
    await this.find(sellerId, id);
    const rows = await this.webhooks.listDeliveries(id, { status: query.status, eventType: query.event_type }, page);
    return toPage(rows, page, (r) => r.seq, DeliveryResponseDto.of);
  }

  async listAttempts(
    sellerId: string,
    id: string,
    deliveryId: string,
    page: PageRequest,
  ): Promise<Page<AttemptResponseDto>> {
    await this.find(sellerId, id);
    if (!(await this.webhooks.findDelivery(id, deliveryId))) throw deliveryNotFound();
    return toPage(await this.webhooks.listAttempts(deliveryId, page), page, (r) => r.seq, AttemptResponseDto.of);
  }

  /** One more attempt now, whatever the delivery's state. */
  async retry(sellerId: string, id: string, deliveryId: string): Promise<DeliveryResponseDto> {
    return requestTransaction(this.dataSource, async (manager) => {
      await this.activeEndpoint(manager, sellerId, id);
      const retried = await this.webhooks.retryNow(manager, id, deliveryId, SINGLE_ATTEMPT_STEP);
      if (!retried) throw deliveryNotFound();
      return DeliveryResponseDto.of(retried);
    });
  }

  /** Queues the seller's events of a period again for this endpoint (recovery after an outage). */
  async replay(sellerId: string, id: string, input: ReplayWebhookDto): Promise<{ queued: number }> {
    const types = input.event_types ? checkEventTypes('event_types', input.event_types, false) : null;
    const since = instantOf(input.since);
    const until = input.until ? instantOf(input.until) : null;
    if (until && until <= since) throw ValidationError.of('until', 'must be after since');
    return requestTransaction(this.dataSource, async (manager) => {
      const endpoint = await this.activeEndpoint(manager, sellerId, id);
      const queued = await this.webhooks.replay(manager, endpoint, {
        since: since.toISOString(),
        until: until?.toISOString() ?? null,
        types,
      });
      return { queued };
    });
  }

  eventTypes(): EventTypeDto[] {
    return EVENT_TYPES.map((type) => ({ type, description: EVENT_TYPE_DESCRIPTIONS[type] }));
  }

  async listEvents(sellerId: string, query: EventListQueryDto, page: PageRequest): Promise<Page<EventResponseDto>> {
    const rows = await this.webhooks.listEvents(
      sellerId,
      { type: query.type, createdAfter: query.created_after ? instantOf(query.created_after) : undefined },
      page,
    );
    if (!rows) {
      throw new BadRequestError(
        'invalid_cursor',
        'The cursor names an event that is no longer kept (events are kept 90 days); list again with created_after.',
      );
    }
    return toPage(rows, page, (r) => r.seq, EventResponseDto.of);
  }

  /**
   * The URL as stored, when it may receive webhooks: see url-safety.ts. A host name must
   * resolve, and only to allowed addresses (checked again at every delivery).
   */
  private async checkUrl(raw: string): Promise<string> {
    const allowPrivate = this.config.webhooksAllowPrivateUrls;
    const syntax = checkWebhookUrlSyntax(raw, allowPrivate);
    let reason = syntax.ok ? urlFormProblem(raw) : syntax.reason;
    if (!reason && syntax.ok && !syntax.isAddress && !allowPrivate) {
      const addresses = await this.resolve(syntax.host).catch(() => [] as string[]);
      reason = refusedResolution(syntax.host, addresses);
    }
    if (reason) {
      throw new BadRequestError('webhook_url_not_allowed', `The webhook URL is not allowed: ${reason}.`);
    }
    return raw;
  }

  private async find(sellerId: string, id: string): Promise<EndpointRow> {
    const row = await this.webhooks.findEndpoint(sellerId, id);
    if (!row) throw notFound();
    return row;
  }

  private async activeEndpoint(manager: EntityManager, sellerId: string, id: string): Promise<EndpointRow> {
    // Locked: a concurrent disable (410, deactivation) waits, then fails what this queues.
    const row = await this.webhooks.lockEndpoint(manager, sellerId, id, 'share');
    if (!row) throw notFound();
    if (!row.active) {
      throw new ConflictError(
        'webhook_inactive',
        'This webhook endpoint is inactive; reactivate it (PATCH {"active": true}) first.',
      );
    }
    return row;
  }
}

/** The event types of a request, without duplicates; unknown ones answer 400 with their path. */
export function checkEventTypes(field: string, types: string[], allowWildcard: boolean): string[] {
  const errors: FieldErrors = {};
  types.forEach((type, i) => {
    if (!(EVENT_TYPES as string[]).includes(type) && !(allowWildcard && type === '*')) {
      errors[`${field}.${i}`] = [
        `"${type}" is not an event type; use one of GET /integrations/webhooks/event_types/${allowWildcard ? ' or "*"' : ''}`,
      ];
    }
  });
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const unique = [...new Set(types)];
  return unique.includes('*') ? ['*'] : (unique as EventType[]);
}

function differences(before: EndpointRow, changes: Updatable): Record<string, { from: unknown; to: unknown }> {
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  for (const [key, to] of Object.entries(changes) as Array<[keyof Updatable, unknown]>) {
    const from = before[key];
    if (JSON.stringify(from) !== JSON.stringify(to)) diff[key] = { from, to };
  }
  return diff;
}

function notFound(): NotFoundError {
  return new NotFoundError('Webhook endpoint not found.', 'webhook_not_found');
}

function deliveryNotFound(): NotFoundError {
  return new NotFoundError('Webhook delivery not found.', 'webhook_delivery_not_found');
}
