import { Body, Controller, Get, Inject, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/access.decorators';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { RateLimit } from '../common/rate-limit/rate-limit';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { CheckoutService } from './checkout.service';
import { CheckoutDto, CheckoutOrderDto } from './dto/checkout.dto';
import { PublicTicketedEventDto } from './dto/ticketed-event.dto';

const EventId = () => UuidParam('event_id', 'Event not found.', 'event_not_found');

/** The public back-end of an event's checkout page: no credential. */
@ApiTags('ticketed events')
@Controller('event/event')
export class CheckoutController {
  constructor(@Inject(CheckoutService) private readonly checkout: CheckoutService) {}

  @Get(':event_id')
  @Public()
  @ApiOperation({
    summary: 'Public context of a published event for its checkout page (seats left are live)',
    description:
      "What a checkout page shows: the event, its seller's name, each ticket type's price and seats `available` now, the payment types, `max_installments` and whether sales are open. A draft or unknown event answers 404.",
  })
  @ApiOkResponse({ type: PublicTicketedEventDto })
  @ApiErrorResponses(404)
  event(@EventId() eventId: string): Promise<PublicTicketedEventDto> {
    return this.checkout.publicEvent(eventId);
  }

  @Post(':event_id/checkout')
  @Public()
  @RateLimit('public_checkout')
  @Idempotent()
  @ApiOperation({
    summary: 'Buy tickets: holds the seats and charges; card orders are paid or declined at once, pix/boleto pending',
    description:
      'Holds the seats with the order in one database transaction (never oversells: 409 `sold_out`, or 409 `not_enough_tickets` with what is left; 409 `sales_closed` outside the sales window, or when no payment type can be used any more), a boleto only while it would be paid before the event starts and a pix only while its 30 minutes would end before the event ends (400 `payment.type`), then charges through a unified transaction of the seller (`source: "event_checkout"`). A card order answers `paid` with its tickets (e-mailed to the buyer) or `declined` with its seats released; a pix or boleto order answers `pending` with its payment data and holds its seats until paid or `expires_at` (pix 30 minutes; boleto the end of its due date 3 days on, in Brasília, until when it can be paid). Rate limited per client address. A retry with the same `Idempotency-Key` answers the same order, even after a crash: never a second order or charge.',
  })
  @ApiCreatedResponse({ type: CheckoutOrderDto })
  @ApiErrorResponses(400, 404, 409, 422)
  create(@EventId() eventId: string, @Body() body: CheckoutDto): Promise<CheckoutOrderDto> {
    return this.checkout.checkout(eventId, body);
  }

  @Get(':event_id/checkout/:order_id')
  @Public()
  @ApiOperation({
    summary: "An order's public status (for a page waiting for a pix payment); e-mail masked",
    description:
      "The order as the checkout answered it, now: its status, payment data, `expires_at` and, once paid, its tickets. The buyer's e-mail is masked. An order of another event answers 404.",
  })
  @ApiOkResponse({ type: CheckoutOrderDto })
  @ApiErrorResponses(404)
  order(
    @EventId() eventId: string,
    @UuidParam('order_id', 'Order not found.', 'order_not_found') orderId: string,
  ): Promise<CheckoutOrderDto> {
    return this.checkout.publicOrder(eventId, orderId);
  }
}
