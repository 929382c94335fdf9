import { formatMoney } from '../common/money/money';
import { boletoPayableUntil, dateInDays } from '../transactions/processor/payment-processor';
import type { PaymentType } from '../split/table';
import type { CheckoutOrderDto, EventOrderDto } from './dto/checkout.dto';
import type { PublicTicketedEventDto, TicketedEventResponseDto } from './dto/ticketed-event.dto';
import type { FullOrder } from './event-orders.repository';
import type { TicketedEventRow, TicketTypeRow } from './ticketed-events.repository';

/** In how many days a checkout's boleto is due. */
const BOLETO_DAYS = 3;

/**
 * How long a pending order holds its seats (API.md section 10.1): a pix 30 minutes; a boleto 3
 * days, to the end (in Brasília) of the day its boleto is due, until when the boleto can be paid. A card
 * charge answers at once; its order only stays pending when the charge's outcome is unknown (or
 * the process died during it): released when the charge is settled, or after 30 minutes.
 */
export function holdUntil(paymentType: string, now: Date): Date {
  return paymentType === 'boleto'
    ? boletoPayableUntil(dateInDays(BOLETO_DAYS, now))
    : new Date(now.getTime() + 30 * 60_000);
}

/**
 * By when an order paid this way must be paid (or its seats released), if it is to be offered:
 * a boleto, which takes days, by the start of the event, so that no ticket is issued for an
 * event under way; a pix by its end, so that none is sold for an event that is over. Null for
 * cards, which answer at once.
 */
export function payBy(type: PaymentType, event: TicketedEventRow): { at: Date; event: 'starts' | 'ends' } | null {
  if (type === 'boleto') return { at: event.startsAt, event: 'starts' };
  if (type === 'pix') return { at: event.endsAt, event: 'ends' };
  return null;
}

/** The event's payment types a checkout can use at `now`: those whose hold would end by payBy. */
export function paymentTypesOffered(event: TicketedEventRow, now: Date): PaymentType[] {
  return event.paymentTypes.filter((type) => {
    const by = payBy(type, event);
    return by === null || holdUntil(type, now) <= by.at;
  });
}

/** Published, within its sales window at `now`, and with a payment type a checkout can use then. */
export function salesOpen(event: TicketedEventRow, now: Date): boolean {
  return (
    event.status === 'published' &&
    event.salesStartAt <= now &&
    now < event.salesEndAt &&
    paymentTypesOffered(event, now).length > 0
  );
}

export function toEventView(event: TicketedEventRow, types: TicketTypeRow[], now: Date): TicketedEventResponseDto {
  return {
    id: event.id,
    seller: event.sellerId,
    name: event.name,
    description: event.description,
    starts_at: event.startsAt.toISOString(),
    ends_at: event.endsAt.toISOString(),
    venue: event.venue,
    status: event.status,
    payment_types: event.paymentTypes,
    max_installments: event.maxInstallments,
    ticket_types: types.map((t) => ({
      id: t.id,
      name: t.name,
      price: formatMoney(t.price),
      quantity: t.quantity,
      max_per_order: t.maxPerOrder,
      sold: t.sold,
      held: t.held,
      available: t.quantity - t.sold - t.held,
    })),
    sales_start_at: event.salesStartAt.toISOString(),
    sales_end_at: event.salesEndAt.toISOString(),
    sales_open: salesOpen(event, now),
    created_at: event.createdAt.toISOString(),
    updated_at: event.updatedAt.toISOString(),
  };
}

export function toPublicEventView(
  event: TicketedEventRow,
  types: TicketTypeRow[],
  sellerName: string,
  now: Date,
): PublicTicketedEventDto {
  return {
    id: event.id,
    name: event.name,
    description: event.description,
    starts_at: event.startsAt.toISOString(),
    ends_at: event.endsAt.toISOString(),
    venue: event.venue,
    seller: { name: sellerName },
    ticket_types: types.map((t) => ({
      id: t.id,
      name: t.name,
      price: formatMoney(t.price),
      available: t.quantity - t.sold - t.held,
      max_per_order: t.maxPerOrder,
    })),
    payment_types: paymentTypesOffered(event, now),
    max_installments: event.maxInstallments,
    sales_start_at: event.salesStartAt.toISOString(),
    sales_end_at: event.salesEndAt.toISOString(),
    sales_open: salesOpen(event, now),
  };
}

function orderBase({ order, items }: FullOrder) {
  return {
    id: order.id,
    event: order.eventId,
    status: order.status,
    amount: formatMoney(order.amount),
    payment_type: order.paymentType,
    installments: order.installments,
    items: items.map((i) => ({
      ticket_type: i.ticketTypeId,
      name: i.name,
      quantity: i.quantity,
      unit_price: formatMoney(i.unitPrice),
    })),
    transaction: order.transactionId,
    pix: order.pix,
    boleto: order.boleto,
    decline_reason: order.declineReason,
    expires_at: order.expiresAt.toISOString(),
    created_at: order.createdAt.toISOString(),
  };
}

/** The order as the buyer's page sees it: the e-mail masked, no document. */
export function toCheckoutOrderView(full: FullOrder): CheckoutOrderDto {
  return {
    ...orderBase(full),
    buyer: { name: full.order.buyerName, email: maskEmail(full.order.buyerEmail) },
    // The buyer's page shows the tickets that admit: none once a paid order is canceled.
    tickets:
      full.order.status === 'paid'
        ? full.tickets.map((t) => ({ id: t.id, ticket_type: t.ticketTypeId, code: t.code }))
        : [],
  };
}

/** The order as its seller sees it (list, webhooks). */
export function toEventOrderView(full: FullOrder): EventOrderDto {
  const { order } = full;
  return {
    ...orderBase(full),
    buyer: { name: order.buyerName, email: order.buyerEmail, document: order.buyerDocument },
    tickets: full.tickets.map((t) => ({
      id: t.id,
      ticket_type: t.ticketTypeId,
      code: t.code,
      checked_in_at: t.checkedInAt?.toISOString() ?? null,
    })),
    paid_at: order.paidAt?.toISOString() ?? null,
    updated_at: order.updatedAt.toISOString(),
  };
}

/** `ana.souza@example.com` → `a***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}
