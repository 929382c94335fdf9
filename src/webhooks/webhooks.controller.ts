import { Body, Controller, Delete, Get, HttpCode, Inject, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/access.decorators';
import type { Principal } from '../auth/principal';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, PageQueryDto, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import {
  AttemptResponseDto,
  CreatedWebhookResponseDto,
  CreateWebhookDto,
  DeliveryListQueryDto,
  DeliveryResponseDto,
  EventListQueryDto,
  EventResponseDto,
  EventTypeDto,
  ReplayResponseDto,
  ReplayWebhookDto,
  UpdateWebhookDto,
  WebhookResponseDto,
  WebhookSecretResponseDto,
} from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';
import { NoBody, TakesNoBody } from '../common/validation/no-body';

const Endpoint = () => UuidParam('id', 'Webhook endpoint not found.', 'webhook_not_found');
const Delivery = () => UuidParam('delivery_id', 'Webhook delivery not found.', 'webhook_delivery_not_found');

/** The seller the API key acts as (the guard admits API keys only here). */
function sellerOf(principal: Principal): string {
  if (principal.kind !== 'api_key') throw new Error('webhook routes take API keys only');
  return principal.sellerId;
}

/** Webhook endpoints, deliveries and events of the API key's seller (API.md section 5). */
@ApiTags('webhooks')
@Controller('integrations/webhooks')
@Authenticated({ credentials: 'api_key' })
export class WebhooksController {
  constructor(@Inject(WebhooksService) private readonly webhooks: WebhooksService) {}

  @Post()
  @Idempotent({ secret: true })
  @ApiOperation({
    summary: 'Register an endpoint (the signing secret is shown only in this response)',
    description:
      '`url` (https; private and internal addresses refused with 400 `webhook_url_not_allowed`), `events` (types or `["*"]`), `description`, `active`. The `secret` (`whsec_…`) is in this answer and never again; a replay with the same Idempotency-Key answers 409 `idempotency_secret_not_replayable` with the id. At most 16 endpoints per seller (409 `webhook_limit_reached`).',
  })
  @ApiCreatedResponse({ type: CreatedWebhookResponseDto })
  @ApiErrorResponses(400, 409)
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWebhookDto): Promise<CreatedWebhookResponseDto> {
    return this.webhooks.create(sellerOf(principal), body);
  }

  @Get()
  @ApiOperation({
    summary: "The seller's endpoints (never the secret)",
    description:
      "Cursor list of the API key's seller's endpoints by `created_at`, newest first (oldest first with `ordering=created_at`); never the secret.",
  })
  @ApiOkResponse({ type: PageOf(WebhookResponseDto) })
  @ApiErrorResponses(400)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto) {
    return this.webhooks.list(sellerOf(principal), toPageRequest(query));
  }

  @Get('event_types')
  @ApiOperation({
    summary: 'Every event type, with what it means',
    description: 'Every event type an endpoint can receive, with a description.',
  })
  @ApiOkResponse({ type: [EventTypeDto] })
  eventTypes(): EventTypeDto[] {
    return this.webhooks.eventTypes();
  }

  @Get('events')
  @ApiOperation({
    summary: "The seller's events, newest first (for backends that poll or catch up)",
    description:
      "The API key's seller's events as they were recorded (`data` as the API showed the record then), ordered by `created_at` (then by the order they were written), newest first, oldest first with `ordering=created_at`; filters `type` and `created_after`. Kept 90 days (a cursor whose event was purged answers 400 `invalid_cursor`). Safe to poll with `created_after` set to the last `created_at` seen (inclusive; skip ids already seen): an event is listed only once every database transaction that started before it has ended, so none can later appear with an earlier `created_at`.",
  })
  @ApiOkResponse({ type: PageOf(EventResponseDto) })
  @ApiErrorResponses(400)
  events(@CurrentPrincipal() principal: Principal, @Query() query: EventListQueryDto) {
    return this.webhooks.listEvents(sellerOf(principal), query, toPageRequest(query));
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One endpoint (never the secret)',
    description: "One endpoint of the seller; another seller's answers 404.",
  })
  @ApiOkResponse({ type: WebhookResponseDto })
  @ApiErrorResponses(404)
  get(@CurrentPrincipal() principal: Principal, @Endpoint() id: string): Promise<WebhookResponseDto> {
    return this.webhooks.get(sellerOf(principal), id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change url, events, description or active',
    description:
      'Changes `url` (checked as on creation), `events`, `description` or `active`. Deactivating fails the pending deliveries; reactivating clears `disabled_reason`.',
  })
  @ApiOkResponse({ type: WebhookResponseDto })
  @ApiErrorResponses(400, 404)
  update(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Body() body: UpdateWebhookDto,
  ): Promise<WebhookResponseDto> {
    return this.webhooks.update(sellerOf(principal), id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete an endpoint (its deliveries are kept)',
    description:
      'Soft delete: the endpoint stops receiving at once, its pending deliveries fail, its deliveries stay readable in the database.',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrorResponses(404)
  async remove(@CurrentPrincipal() principal: Principal, @Endpoint() id: string): Promise<void> {
    await this.webhooks.remove(sellerOf(principal), id);
  }

  @Post(':id/rotate_secret')
  @TakesNoBody()
  @HttpCode(200)
  @Idempotent({ secret: true })
  @ApiOperation({
    summary: 'New signing secret; the old one keeps signing too for 24 hours',
    description:
      'Answers the new `secret` (shown only here). For 24 hours each request carries two `v1,` signatures, one per secret, so receivers can switch without losing requests. Every retired secret keeps its own 24 hours: after a second rotation within the day there are three signatures (at most the 10 newest retired secrets sign).',
  })
  @ApiOkResponse({ type: WebhookSecretResponseDto })
  @ApiErrorResponses(404, 409, 422)
  rotateSecret(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Body() _none: NoBody,
  ): Promise<WebhookSecretResponseDto> {
    return this.webhooks.rotateSecret(sellerOf(principal), id);
  }

  @Post(':id/test')
  @TakesNoBody()
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    summary: 'Send a webhook.test event to this endpoint only',
    description:
      'Records a `webhook.test` event and queues its delivery to this endpoint only; answers the delivery. 409 `webhook_inactive` for an inactive endpoint.',
  })
  @ApiAcceptedResponse({ type: DeliveryResponseDto })
  @ApiErrorResponses(404, 409)
  test(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Body() _none: NoBody,
  ): Promise<DeliveryResponseDto> {
    return this.webhooks.sendTest(sellerOf(principal), id);
  }

  @Post(':id/replay')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    summary: "Deliver the seller's events of a period again (recovery after an outage)",
    description:
      '`since`, `until` (default now), `event_types`: queues again every event of the seller in the period that this endpoint receives, with a fresh retry schedule; answers how many. One delivery per (endpoint, event); one with an attempt in flight is queued again as soon as that attempt ends.',
  })
  @ApiAcceptedResponse({ type: ReplayResponseDto })
  @ApiErrorResponses(400, 404, 409)
  replay(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Body() body: ReplayWebhookDto,
  ): Promise<ReplayResponseDto> {
    return this.webhooks.replay(sellerOf(principal), id, body);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    summary: "The endpoint's deliveries, newest first",
    description:
      "Cursor list, filters `status` and `event_type`: attempts so far, the last answer (status, first 1 KiB of the body) or error, and the next attempt's time while pending.",
  })
  @ApiOkResponse({ type: PageOf(DeliveryResponseDto) })
  @ApiErrorResponses(400, 404)
  deliveries(@CurrentPrincipal() principal: Principal, @Endpoint() id: string, @Query() query: DeliveryListQueryDto) {
    return this.webhooks.listDeliveries(sellerOf(principal), id, query, toPageRequest(query));
  }

  @Get(':id/deliveries/:delivery_id/attempts')
  @ApiOperation({
    summary: 'Every attempt of a delivery: status code, duration, error',
    description: "Every attempt of the delivery (cursor list): start, duration, the answer's status code or the error.",
  })
  @ApiOkResponse({ type: PageOf(AttemptResponseDto) })
  @ApiErrorResponses(400, 404)
  attempts(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Delivery() deliveryId: string,
    @Query() query: PageQueryDto,
  ) {
    return this.webhooks.listAttempts(sellerOf(principal), id, deliveryId, toPageRequest(query));
  }

  @Post(':id/deliveries/:delivery_id/retry')
  @TakesNoBody()
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    summary: 'One more attempt now, whatever the state',
    description:
      'Queues one attempt now: a pending delivery keeps its schedule; a finished one gets a single attempt. Asked for while an attempt is in flight, it is made as soon as that attempt ends. The `webhook-id` stays the event id.',
  })
  @ApiAcceptedResponse({ type: DeliveryResponseDto })
  @ApiErrorResponses(404, 409)
  retry(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Delivery() deliveryId: string,
    @Body() _none: NoBody,
  ): Promise<DeliveryResponseDto> {
    return this.webhooks.retry(sellerOf(principal), id, deliveryId);
  }
}
