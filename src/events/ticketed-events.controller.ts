import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/access.decorators';
import type { Principal } from '../auth/principal';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { CheckedInTicketDto, EventOrderDto, EventOrderListQueryDto } from './dto/checkout.dto';
import {
  CreateTicketedEventDto,
  TicketedEventListQueryDto,
  TicketedEventResponseDto,
  UpdateTicketedEventDto,
} from './dto/ticketed-event.dto';
import { TicketedEventsService } from './ticketed-events.service';
import { NoBody, TakesNoBody } from '../common/validation/no-body';

const EventId = () => UuidParam('event_id', 'Event not found.', 'event_not_found');

/** The seller's side of ticketed events: JWT with events.manage on the event's seller, or a superuser. */
@ApiTags('ticketed events')
@Controller('event/event')
export class TicketedEventsController {
  constructor(@Inject(TicketedEventsService) private readonly events: TicketedEventsService) {}

  @Post()
  @Authenticated()
  @Idempotent()
  @ApiOperation({
    summary: 'Create a ticketed event (as a draft) with its ticket types',
    description:
      'Creates the event of `seller` as a `draft` (not visible to the public until published) with its ticket types (`name`, `price`, `quantity`, `max_per_order`), payment types, `max_installments` and sales window. Needs `events.manage` on `seller`; an unknown seller answers 400.',
  })
  @ApiCreatedResponse({ type: TicketedEventResponseDto })
  @ApiErrorResponses(400, 409, 422)
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateTicketedEventDto,
  ): Promise<TicketedEventResponseDto> {
    return this.events.create(principal, body);
  }

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: "List a seller's events (`seller` required unless superuser)",
    description:
      "The events of `seller` (needs `events.manage` on it), newest first, cursor-paginated, filtered by `status`, each with its ticket types and their live `sold`, `held` and `available` counts. Without `seller`, only a superuser may list every seller's events.",
  })
  @ApiOkResponse({ type: PageOf(TicketedEventResponseDto) })
  @ApiErrorResponses(400, 404)
  list(@CurrentPrincipal() principal: Principal, @Query() query: TicketedEventListQueryDto) {
    return this.events.list(principal, query, toPageRequest(query));
  }

  @Patch(':event_id')
  @Authenticated()
  @ApiOperation({
    summary: 'Change texts, dates, payment options; publish or close; add ticket types or change their quantity',
    description:
      "Changes the given fields only. `status` `published` opens the event to the public (sales follow the sales window); `closed` stops sales. Ticket types without `id` are added; a ticket type's quantity may be raised, or lowered to what is sold or held but never below (409 `quantity_below_committed`); its price never changes. Needs `events.manage` on the event's seller; an event the caller cannot see answers 404.",
  })
  @ApiOkResponse({ type: TicketedEventResponseDto })
  @ApiErrorResponses(400, 404, 409)
  update(
    @CurrentPrincipal() principal: Principal,
    @EventId() id: string,
    @Body() body: UpdateTicketedEventDto,
  ): Promise<TicketedEventResponseDto> {
    return this.events.update(principal, id, body);
  }

  @Get(':event_id/orders')
  @Authenticated()
  @ApiOperation({
    summary: "The event's orders (filter by status)",
    description:
      "The event's orders, newest first, cursor-paginated, filtered by `status` (`pending`, `paid`, `declined`, `expired`, `canceled`), with the buyer, the items, the transaction and the tickets issued. Needs `events.manage` on the event's seller.",
  })
  @ApiOkResponse({ type: PageOf(EventOrderDto) })
  @ApiErrorResponses(400, 404)
  orders(@CurrentPrincipal() principal: Principal, @EventId() id: string, @Query() query: EventOrderListQueryDto) {
    return this.events.listOrders(principal, id, query, toPageRequest(query));
  }

  @Post(':event_id/tickets/:code/checkin')
  @TakesNoBody()
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Check a ticket in by its code (once only)',
    description:
      "Admits the holder of a ticket of a paid order of this event: 200 the first time, 409 `ticket_already_checked_in` after. A code of another event's ticket, of an unpaid order, or unknown answers 404 `ticket_not_found`. Codes are read without case or dashes mattering. Needs `events.manage` on the event's seller.",
  })
  @ApiOkResponse({ type: CheckedInTicketDto, description: 'Checked in now.' })
  @ApiErrorResponses(404, 409)
  checkIn(
    @CurrentPrincipal() principal: Principal,
    @EventId() id: string,
    @Param('code') code: string,
    @Body() _none: NoBody,
  ): Promise<CheckedInTicketDto> {
    return this.events.checkIn(principal, id, code);
  }
}
