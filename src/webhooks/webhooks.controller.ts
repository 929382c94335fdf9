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
  @ApiOperation({ summary: 'Register an endpoint (the signing secret is shown only in this response)' })
  @ApiCreatedResponse({ type: CreatedWebhookResponseDto })
  @ApiErrorResponses(400, 409)
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWebhookDto): Promise<CreatedWebhookResponseDto> {
    return this.webhooks.create(sellerOf(principal), body);
  }

  @Get()
  @ApiOperation({ summary: "The seller's endpoints (never the secret)" })
  @ApiOkResponse({ type: PageOf(WebhookResponseDto) })
  @ApiErrorResponses(400)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto) {
    return this.webhooks.list(sellerOf(principal), toPageRequest(query));
  }

  @Get('event_types')
  @ApiOperation({ summary: 'Every event type, with what it means' })
  @ApiOkResponse({ type: [EventTypeDto] })
  eventTypes(): EventTypeDto[] {
    return this.webhooks.eventTypes();
  }

  @Get('events')
  @ApiOperation({ summary: "The seller's events, newest first (for backends that poll or catch up)" })
  @ApiOkResponse({ type: PageOf(EventResponseDto) })
  @ApiErrorResponses(400)
  events(@CurrentPrincipal() principal: Principal, @Query() query: EventListQueryDto) {
    return this.webhooks.listEvents(sellerOf(principal), query, toPageRequest(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One endpoint (never the secret)' })
  @ApiOkResponse({ type: WebhookResponseDto })
  @ApiErrorResponses(404)
  get(@CurrentPrincipal() principal: Principal, @Endpoint() id: string): Promise<WebhookResponseDto> {
    return this.webhooks.get(sellerOf(principal), id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change url, events, description or active' })
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
  @ApiOperation({ summary: 'Delete an endpoint (its deliveries are kept)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrorResponses(404)
  async remove(@CurrentPrincipal() principal: Principal, @Endpoint() id: string): Promise<void> {
    await this.webhooks.remove(sellerOf(principal), id);
  }

  @Post(':id/rotate_secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'New signing secret; the old one keeps signing too for 24 hours' })
  @ApiOkResponse({ type: WebhookSecretResponseDto })
  @ApiErrorResponses(404)
  rotateSecret(@CurrentPrincipal() principal: Principal, @Endpoint() id: string): Promise<WebhookSecretResponseDto> {
    return this.webhooks.rotateSecret(sellerOf(principal), id);
  }

  @Post(':id/test')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({ summary: 'Send a webhook.test event to this endpoint only' })
  @ApiAcceptedResponse({ type: DeliveryResponseDto })
  @ApiErrorResponses(404, 409)
  test(@CurrentPrincipal() principal: Principal, @Endpoint() id: string): Promise<DeliveryResponseDto> {
    return this.webhooks.sendTest(sellerOf(principal), id);
  }

  @Post(':id/replay')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({ summary: "Deliver the seller's events of a period again (recovery after an outage)" })
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
  @ApiOperation({ summary: "The endpoint's deliveries, newest first" })
  @ApiOkResponse({ type: PageOf(DeliveryResponseDto) })
  @ApiErrorResponses(400, 404)
  deliveries(@CurrentPrincipal() principal: Principal, @Endpoint() id: string, @Query() query: DeliveryListQueryDto) {
    return this.webhooks.listDeliveries(sellerOf(principal), id, query, toPageRequest(query));
  }

  @Get(':id/deliveries/:delivery_id/attempts')
  @ApiOperation({ summary: 'Every attempt of a delivery: status code, duration, error' })
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
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({ summary: 'One more attempt now, whatever the state' })
  @ApiAcceptedResponse({ type: DeliveryResponseDto })
  @ApiErrorResponses(404, 409)
  retry(
    @CurrentPrincipal() principal: Principal,
    @Endpoint() id: string,
    @Delivery() deliveryId: string,
  ): Promise<DeliveryResponseDto> {
    return this.webhooks.retry(sellerOf(principal), id, deliveryId);
  }
}
