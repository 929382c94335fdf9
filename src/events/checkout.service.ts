import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { isUUID } from 'class-validator';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError, ConflictError, FieldErrors, NotFoundError, ValidationError } from '../common/errors/api-error';
import { Cents, formatMoney, MAX_AMOUNT_CENTS } from '../common/money/money';
import {
  heldIdempotencyKey,
  IdempotencyClaim,
  keepIdempotencyKeyOpen,
  resumedResource,
} from '../common/idempotency/request-transaction';
import { JobQueue } from '../jobs/job-queue.service';
import { MailService } from '../mail/mail.service';
import { normaliseDocument } from '../sellers/document';
import { SellersService } from '../sellers/sellers.service';
import type { CreateTransactionDto, TransactionResponseDto } from '../transactions/dto/transaction.dto';
import { TransactionSettlementListener, TransactionSettlements } from '../transactions/transaction-settlements';
import { ChargeOptions, TransactionsService } from '../transactions/transactions.service';
import { recordEvent } from '../webhooks/outbox';
import type { CheckoutDto, CheckoutOrderDto } from './dto/checkout.dto';
import type { PublicTicketedEventDto } from './dto/ticketed-event.dto';
import { EventOrderRow, EventOrdersRepository, FullOrder, NewOrder, OrderItemRow } from './event-orders.repository';
import {
  holdUntil,
  payBy,
  paymentTypesOffered,
  salesOpen,
  toCheckoutOrderView,
  toEventOrderView,
  toPublicEventView,
} from './event-views';
import { available, PAYMENT_VOIDED, pendingOrderOutcome, settlementAction } from './order-state';
import { newTicketCode } from './ticket-code';
import { eventNotFound } from './ticketed-events.service';
import { isOversold, TicketedEventRow, TicketedEventsRepository, TicketTypeRow } from './ticketed-events.repository';
import { SYSTEM_VOID_REASONS } from '../transactions/void-reasons';

const EXPIRE_JOB = 'events.expire-orders';
const VOID_CHARGE_JOB = 'events.void-unfulfillable-charge';
const EXPIRY_BATCH = 200;
/** Holds refused while the seats came back meanwhile are tried this many times in all. */
const HOLD_ATTEMPTS = 3;

/**
 * The public checkout of a ticketed event. Seats are held with the order and its pending charge
 * in one database transaction (an UPDATE that the database's CHECK refuses past the quantity, so
 * nothing can oversell); the payment goes through the transactions service; the order then
 * follows its transaction — paid (tickets issued and e-mailed), declined, or released when unpaid
 * at `expires_at` — in the database transaction that changes the transaction's status.
 */
@Injectable()
export class CheckoutService implements OnModuleInit, TransactionSettlementListener {
  private readonly logger = new Logger('Checkout');
  private readonly placing = new AsyncLocalStorage<PlacedOrder>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(TicketedEventsRepository) private readonly events: TicketedEventsRepository,
    @Inject(EventOrdersRepository) private readonly orders: EventOrdersRepository,
    @Inject(TransactionsService) private readonly transactions: TransactionsService,
    @Inject(TransactionSettlements) private readonly settlements: TransactionSettlements,
    @Inject(SellersService) private readonly sellers: SellersService,
    @Inject(MailService) private readonly mail: MailService,
    @Inject(JobQueue) private readonly jobs: JobQueue,
  ) {}

  onModuleInit(): void {
    this.settlements.subscribe(this);
    this.jobs.define({
      name: EXPIRE_JOB,
      schedule: '* * * * *',
      handler: async () => {
        await this.expireDue(new Date());
      },
    });
    this.jobs.define<{ sellerId: string; transactionId: string }>({
      name: VOID_CHARGE_JOB,
      handler: ({ sellerId, transactionId }) => this.voidUnfulfillable(sellerId, transactionId),
      queue: { retryLimit: 20, retryDelay: 30, retryBackoff: true },
    });
  }

  async publicEvent(id: string): Promise<PublicTicketedEventDto> {
    const { event, types } = await this.publishedEvent(id);
    // The public page shows published events only (API.md 10.1); a closed one is gone from it.
    if (event.status !== 'published') throw eventNotFound();
    const seller = await this.sellers.find(event.sellerId);
    return toPublicEventView(event, types, seller.name, new Date());
  }

  async publicOrder(eventId: string, orderId: string): Promise<CheckoutOrderDto> {
    const full = await this.orders.findForEvent(eventId, orderId);
    if (!full) throw new NotFoundError('Order not found.', 'order_not_found');
    return toCheckoutOrderView(full);
  }

  /**
   * Holds the seats with the order, charges, and answers the order as its charge left it. The
   * order, its seats and the pending charge are written in one database transaction (see
   * placeOrder), with the request's Idempotency-Key tied to the order: a retry after a crash
   * resumes that order (and its charge) instead of making a second one.
   */
  async checkout(eventId: string, input: CheckoutDto): Promise<CheckoutOrderDto> {
    const { event, types } = await this.publishedEvent(eventId);
    const resumed = resumedResource();
    if (resumed) return this.resume(event, resumed, input);
    // One clock for the whole checkout: what is offered now and how long the order holds its seats.
    const now = new Date();
    if (!salesOpen(event, now)) {
      throw new ConflictError('sales_closed', 'Ticket sales for this event are closed or not open yet.');
    }
    const { items, amount } = checkItems(input, types);
    // The order's id is its charge's reference. A hold the database refused wrote nothing, so a
    // new attempt places the order again under the same id.
    const id = randomUUID();
    const charge = await this.checkPayment(event, input, amount, id, now);
    // Too few seats left as this request read the event: refused without locking the seat rows.
    const short = items.find((item) => seatsLeftOf(types, item.ticketTypeId) < item.quantity);
    if (short) throw notEnoughSeats(short, seatsLeftOf(types, short.ticketTypeId));

    const order: NewOrder = {
      eventId,
      sellerId: event.sellerId,
      amount,
      paymentType: input.payment.type,
      installments: charge.installments ?? 1,
      buyerName: input.buyer.name,
      buyerEmail: input.buyer.email,
      buyerDocument: charge.customer!.document!,
      expiresAt: holdUntil(input.payment.type, now),
    };
    const key = heldIdempotencyKey();
    for (let attempt = 1; ; attempt++) {
      const placed: PlacedOrder = {
        orderId: id,
        event,
        items: items.map((item) => ({ ...item, orderId: id })),
        settled: null,
      };
      try {
        // The charge's settlement moves the order on (onTransactionSettled), whatever the outcome.
        return await this.charge(placed, { id, eventId, sellerId: event.sellerId }, charge, {
          alongside: (manager) => this.placeOrder(manager, id, order, items, key),
          // A pix code or a boleto stops being payable when its seats stop being held.
          payableUntil: order.expiresAt,
        });
      } catch (error) {
        if (!isOversold(error)) throw error;
        const left = await this.events.seatsLeft(items.map((item) => item.ticketTypeId));
        const refused = inLockOrder(items).find((item) => (left.get(item.ticketTypeId) ?? 0) < item.quantity);
        if (refused) throw notEnoughSeats(refused, left.get(refused.ticketTypeId) ?? 0);
        // Seats came back between the refusal and the count (another order released them): the
        // order is placed again, a few times; after that the buyer is told to try again.
        if (attempt === HOLD_ATTEMPTS) {
          throw new ConflictError('not_enough_tickets', 'The seats asked for were taken meanwhile; try again.');
        }
      }
    }
  }

  /**
   * The order and its seats, written in the database transaction that stores its pending charge
   * (before the processor hears of it). The holds go last: with the order and the charge they
   * travel in one write with COMMIT, so that a hot seat row is locked only while the database
   * runs them. A hold of more seats than are left fails the commit (the database's CHECK) and
   * nothing is written, no charge either.
   */
  private async placeOrder(
    manager: EntityManager,
    id: string,
    order: NewOrder,
    items: CheckedItem[],
    key: IdempotencyClaim | undefined,
  ): Promise<void> {
    await this.orders.insert(manager, id, order, items);
    await key?.tie(manager, id);
    for (const item of inLockOrder(items)) await this.events.hold(manager, item.ticketTypeId, item.quantity);
  }

  /**
   * The retry of a checkout whose first attempt was interrupted after its order was written: its
   * charge is resumed (the processor is asked, nothing is charged twice), or begun when the
   * attempt died before it; an order already settled is answered as it is.
   */
  private async resume(event: TicketedEventRow, orderId: string, input: CheckoutDto): Promise<CheckoutOrderDto> {
    const full = await this.orders.findForEvent(event.id, orderId);
    if (!full) throw new NotFoundError('Order not found.', 'order_not_found');
    const { order, items } = full;
    if (order.status !== 'pending' || order.transactionId !== null || order.expiresAt <= new Date()) {
      return toCheckoutOrderView(full);
    }
    const placed = { orderId, event, items, settled: null };
    const resumeOf = await this.chargeOf(order);
    try {
      // Checked as of the order's placing: its hold was fixed then, and a retry does not change it.
      const charge = await this.checkPayment(event, input, order.amount, orderId, order.createdAt);
      return await this.charge(placed, order, charge, { resumeOf, payableUntil: order.expiresAt });
    } catch (error) {
      // Refused before any charge existed (a 4xx: the event no longer takes this payment type, the
      // seller has no rate plan): the seats go back. Anything else leaves the order pending for the
      // expiry job, which finds its charge if any.
      if (resumeOf === null && error instanceof ApiError && error.status < 500) {
        await this.dataSource.transaction((manager) => this.release(manager, order, 'canceled', error.code));
      }
      throw error;
    }
  }

  /**
   * Charges the order (see ChargeOptions: resumes an earlier charge, or writes the order with a
   * new one) and answers the order as the charge's settlement left it, as that settlement wrote
   * it: no second read. A card charge whose outcome
   * the processor did not tell keeps the request's Idempotency-Key open, so that a retry resumes it.
   */
  private async charge(
    placed: PlacedOrder,
    order: OrderRef,
    charge: CreateTransactionDto,
    options: ChargeOptions,
  ): Promise<CheckoutOrderDto> {
    const tx = await this.placing.run(placed, () =>
      this.transactions.create(order.sellerId, charge, 'event_checkout', options),
    );
    // Pending without payment instructions: the processor's outcome is unknown (a card still being
    // decided, or a pix/boleto it failed to issue). The key stays open so a retry resumes the charge.
    if (tx.status === 'pending' && !tx.pix && !tx.boleto) keepIdempotencyKeyOpen();
    return toCheckoutOrderView(placed.settled ?? (await this.orders.findForEvent(order.eventId, order.id))!);
  }

  /**
   * Moves the order of an event checkout with its transaction; inside the transaction's database
   * transaction. The order is settled in one statement (linked to the transaction and, when
   * pending, moved to where the transaction takes it); what follows depends on where it was.
   */
  async onTransactionSettled(manager: EntityManager, tx: TransactionResponseDto): Promise<void> {
    if (tx.source !== 'event_checkout' || !tx.reference || !isUUID(tx.reference)) return;
    const pendingTo = pendingOrderOutcome(tx);
    const settled = await this.orders.settle(
      manager,
      tx.seller,
      tx.reference,
      { transactionId: tx.id, pix: tx.pix, boleto: tx.boleto },
      pendingTo.status,
      pendingTo.reason,
    );
    if (!settled) return;
    const { order, previous } = settled;
    // The checkout that placed this order is waiting for it: it hands over what it knows and gets the order back.
    const placing = this.placing.getStore();
    const placed = placing?.orderId === order.id ? placing : undefined;
    const action = settlementAction(previous, tx);
    switch (action.kind) {
      case 'complete':
        return this.completed(manager, order, placed);
      case 'release':
        return this.released(manager, order, placed);
      case 'cancel_paid':
        return this.cancelPaid(manager, order);
      case 'void_charge':
        this.logger.warn({ order: order.id, transaction: tx.id }, 'A charge for a released order is voided');
        await this.jobs.send(VOID_CHARGE_JOB, { sellerId: tx.seller, transactionId: tx.id }, {}, manager);
        return;
      case 'link':
        if (placed) placed.settled = { order, items: placed.items, tickets: [] };
        return;
      case 'none':
        return;
    }
  }

  /**
   * Releases the seats of pending orders unpaid at `now`. An order with a charge has the
   * charge voided (the settlement then releases the order, in the void's transaction); an
   * order left without a charge (placed by a build that wrote the two apart) is released here.
   * Every order due is tried once per run, in batches in the order they fell due (after the
   * last one tried, so that one that cannot be expired now holds up none behind it; it is tried
   * again on the next run). Answers how many orders it expired.
   */
  async expireDue(now: Date): Promise<number> {
    let expired = 0;
    let after: EventOrderRow | null = null;
    for (;;) {
      const due = await this.orders.duePending(now, EXPIRY_BATCH, after);
      for (const order of due) {
        try {
          if (await this.expire(order)) expired++;
        } catch (error) {
          this.logger.error({ err: error, order: order.id }, 'Could not expire an order; tried again later');
        }
      }
      if (due.length < EXPIRY_BATCH) return expired;
      after = due[due.length - 1];
    }
  }

  private async expire(order: EventOrderRow): Promise<boolean> {
    const transactionId = order.transactionId ?? (await this.chargeOf(order));
    if (transactionId) {
      try {
        const voided = await this.transactions.void(
          order.sellerId,
          transactionId,
          SYSTEM_VOID_REASONS.checkoutExpired,
          {
            onlyPending: true,
          },
        );
        return voided.status === 'voided';
      } catch (error) {
        // Paid, declined or voided meanwhile: its settlement already moved the order.
        if (error instanceof ConflictError || error instanceof NotFoundError) return false;
        throw error;
      }
    }
    return this.dataSource.transaction(async (manager) => {
      const locked = await this.orders.lockForSeller(manager, order.sellerId, order.id);
      if (!locked || locked.status !== 'pending' || locked.transactionId !== null) return false;
      await this.release(manager, locked, 'expired', 'not_paid_in_time');
      return true;
    });
  }

  /** The charge an order's checkout began, if it got that far (found by its reference). */
  private async chargeOf(order: EventOrderRow): Promise<string | null> {
    const page = await this.transactions.list(
      order.sellerId,
      { reference: order.id, source: 'event_checkout' },
      { limit: 1, descending: true, after: null },
    );
    return page.results[0]?.id ?? null;
  }

  private async voidUnfulfillable(sellerId: string, transactionId: string): Promise<void> {
    try {
      await this.transactions.void(sellerId, transactionId, SYSTEM_VOID_REASONS.orderReleased);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error; // already voided or declined
    }
  }

  /** Just paid: held seats sold, one ticket per seat, the tickets e-mailed, `checkout.completed`. */
  private async completed(manager: EntityManager, order: EventOrderRow, placed?: PlacedOrder): Promise<void> {
    const items = placed?.items ?? (await this.orders.items(manager, order.id));
    const tickets = await this.orders.insertTickets(
      manager,
      items.flatMap((item) =>
        Array.from({ length: item.quantity }, () => ({
          orderId: order.id,
          eventId: order.eventId,
          ticketTypeId: item.ticketTypeId,
          code: newTicketCode(),
        })),
      ),
    );
    const event = placed?.event ?? (await this.events.find(order.eventId, manager))!;
    const full = { order, items, tickets };
    await this.mail.queue(manager, ticketsMail(event, full));
    await recordEvent(manager, 'checkout.completed', order.sellerId, toEventOrderView(full));
    // Last, so the hot seat row stays locked as briefly as possible before the commit.
    for (const item of inLockOrder(items)) {
      await this.events.moveSeats(manager, item.ticketTypeId, item.quantity, 'sell');
    }
    if (placed) placed.settled = full;
  }

  /** Not paid (declined, expired, canceled): moves the pending order there, and its held seats go back. */
  private async release(
    manager: EntityManager,
    pending: OrderRef,
    status: 'declined' | 'expired' | 'canceled',
    reason: string | null,
  ): Promise<void> {
    const order = await this.orders.transition(manager, pending.id, 'pending', status, reason);
    if (order) await this.released(manager, order);
  }

  /** Just released (declined, expired, canceled): the held seats go back; `checkout.expired` when expired. */
  private async released(manager: EntityManager, order: EventOrderRow, placed?: PlacedOrder): Promise<void> {
    const items = placed?.items ?? (await this.orders.items(manager, order.id));
    if (order.status === 'expired') {
      await recordEvent(manager, 'checkout.expired', order.sellerId, toEventOrderView({ order, items, tickets: [] }));
    }
    for (const item of inLockOrder(items)) {
      await this.events.moveSeats(manager, item.ticketTypeId, item.quantity, 'release');
    }
    if (placed) placed.settled = { order, items, tickets: [] };
  }

  /** A paid order's payment was reversed: its seats go back on sale and its tickets stop admitting. */
  private async cancelPaid(manager: EntityManager, paid: EventOrderRow): Promise<void> {
    const order = await this.orders.transition(manager, paid.id, 'paid', 'canceled', PAYMENT_VOIDED);
    if (!order) return;
    for (const item of await this.orders.items(manager, order.id)) {
      await this.events.moveSeats(manager, item.ticketTypeId, item.quantity, 'unsell');
    }
  }

  /** A published (or closed) event with its ticket types; a draft does not exist for the public. */
  private async publishedEvent(id: string): Promise<{ event: TicketedEventRow; types: TicketTypeRow[] }> {
    const found = await this.events.findWithTicketTypes(id);
    if (!found || found.event.status === 'draft') throw eventNotFound();
    return found;
  }

  /**
   * The charge of the order (its reference: the order's id), checked by the transactions
   * service's own rules before any seat is held, with its field paths moved to where the
   * checkout body has them. The transactions service does not check the same object again.
   */
  private async checkPayment(
    event: TicketedEventRow,
    input: CheckoutDto,
    amount: Cents,
    orderId: string,
    placedAt: Date,
  ): Promise<CreateTransactionDto> {
    const problems: FieldErrors = {};
    const { payment, buyer } = input;
    const offered = paymentTypesOffered(event, placedAt);
    if (!offered.includes(payment.type)) {
      const by = payBy(payment.type, event);
      problems['payment.type'] = [
        by && event.paymentTypes.includes(payment.type)
          ? // Something else is offered: sales are closed (409) when nothing is.
            `${payment.type} can no longer be paid before the event ${by.event}; pay by ${offered.join(', ').replace(/, ([^,]*)$/, ' or $1')}`
          : `must be one of ${event.paymentTypes.join(', ')} for this event`,
      ];
    }
    if ((payment.installments ?? 1) > event.maxInstallments) {
      problems['payment.installments'] = [`must be at most ${event.maxInstallments} for this event`];
    }
    // Checked by the body's validation (CheckoutDto).
    const document = normaliseDocument(buyer.document)!;
    const charge: CreateTransactionDto = {
      amount: formatMoney(amount),
      payment_type: payment.type,
      installments: payment.installments ?? 1,
      entry_mode: 'online',
      card: payment.card,
      description: `${event.name} (tickets)`.slice(0, 255),
      customer: { name: buyer.name, email: buyer.email, document: document.digits },
      reference: orderId,
    };
    try {
      await this.transactions.checkPayment(charge);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      for (const [path, messages] of Object.entries(error.errors ?? {})) {
        const moved =
          path === 'amount' ? 'items' : path.startsWith('customer.') ? `buyer.${path.slice(9)}` : `payment.${path}`;
        problems[moved] ??= messages;
      }
    }
    if (Object.keys(problems).length > 0) throw new ValidationError(problems);
    return charge;
  }
}

/**
 * An order its checkout is placing, while it waits for the charge: the settlement of that charge
 * (in the same call chain) takes the event and items from it and leaves the settled order in it.
 */
interface PlacedOrder {
  orderId: string;
  event: TicketedEventRow;
  /** In the event's ticket type order, as the order's views list them. */
  items: OrderItemRow[];
  settled: FullOrder | null;
}

/** What the checkout knows of the order it placed. */
type OrderRef = Pick<EventOrderRow, 'id' | 'eventId' | 'sellerId'>;

/** Seat rows are always locked in ticket type id order, so that concurrent orders never deadlock. */
function inLockOrder<T extends { ticketTypeId: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.ticketTypeId < b.ticketTypeId ? -1 : 1));
}

interface CheckedItem {
  ticketTypeId: string;
  name: string;
  quantity: number;
  unitPrice: Cents;
}

/** The items against the event's ticket types: each type once, known, within max_per_order; the total. */
function checkItems(input: CheckoutDto, types: TicketTypeRow[]): { items: CheckedItem[]; amount: Cents } {
  const problems: FieldErrors = {};
  const seen = new Set<string>();
  const items: CheckedItem[] = [];
  input.items.forEach((item, i) => {
    const id = item.ticket_type.toLowerCase();
    const type = types.find((t) => t.id === id);
    if (seen.has(id)) problems[`items.${i}.ticket_type`] = ['is already in another item; give each ticket type once'];
    else if (!type) problems[`items.${i}.ticket_type`] = ['is not a ticket type of this event'];
    else if (item.quantity > type.maxPerOrder) {
      problems[`items.${i}.quantity`] = [`must be at most ${type.maxPerOrder} for "${type.name}"`];
    } else {
      items.push({ ticketTypeId: id, name: type.name, quantity: item.quantity, unitPrice: type.price });
    }
    seen.add(id);
  });
  // In the event's ticket type order, as the order's views list them.
  items.sort(
    (a, b) => types.findIndex((t) => t.id === a.ticketTypeId) - types.findIndex((t) => t.id === b.ticketTypeId),
  );
  const amount = items.reduce((sum, item) => sum + item.unitPrice * item.quantity, 0);
  if (Object.keys(problems).length === 0 && amount > MAX_AMOUNT_CENTS) {
    problems.items = [`come to more than the largest amount of one payment (${formatMoney(MAX_AMOUNT_CENTS)})`];
  }
  if (Object.keys(problems).length > 0) throw new ValidationError(problems);
  return { items, amount };
}

function seatsLeftOf(types: TicketTypeRow[], id: string): number {
  const type = types.find((t) => t.id === id)!;
  return available(type);
}

/** The refusal of an item with more seats than are left: the body names the ticket type and what is left. */
function notEnoughSeats(item: CheckedItem, left: number): ConflictError {
  const details = { ticket_type: item.ticketTypeId, available: Math.max(0, left) };
  if (left <= 0) return new ConflictError('sold_out', `"${item.name}" is sold out.`, details);
  return new ConflictError(
    'not_enough_tickets',
    `Only ${left} ticket${left === 1 ? '' : 's'} of "${item.name}" ${left === 1 ? 'is' : 'are'} left; ${item.quantity} were asked for.`,
    details,
  );
}

function ticketsMail(event: TicketedEventRow, full: FullOrder & { items: OrderItemRow[] }) {
  const names = new Map(full.items.map((i) => [i.ticketTypeId, i.name]));
  const lines = [
    `Hello ${full.order.buyerName},`,
    '',
    `Your order ${full.order.id} for ${event.name} is paid (${formatMoney(full.order.amount)} BRL).`,
    `When: ${event.startsAt.toISOString()} to ${event.endsAt.toISOString()}`,
    ...(event.venue ? [`Where: ${event.venue}`] : []),
    '',
    `Your tickets (${full.tickets.length}); show each code at the door, it admits once:`,
    ...full.tickets.map((t) => `  ${names.get(t.ticketTypeId)}: ${t.code}`),
  ];
  return { to: full.order.buyerEmail, subject: `Your tickets for ${event.name}`, text: lines.join('\n') };
}
