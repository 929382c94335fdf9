import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuthorizationService } from '../auth/authorization.service';
import type { Principal } from '../auth/principal';
import { ConflictError, FieldErrors, NotFoundError, ValidationError } from '../common/errors/api-error';
import { checkMoney } from '../common/money/money';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { instantOf } from '../common/validation/date-time.decorator';
import type { CheckedInTicketDto, EventOrderDto, EventOrderListQueryDto } from './dto/checkout.dto';
import type {
  CreateTicketedEventDto,
  TicketedEventListQueryDto,
  TicketedEventResponseDto,
  UpdateTicketedEventDto,
} from './dto/ticketed-event.dto';
import { EventOrdersRepository } from './event-orders.repository';
import { toEventOrderView, toEventView } from './event-views';
import { normaliseTicketCode } from './ticket-code';
import { EventChanges, NewTicketType, TicketedEventRow, TicketedEventsRepository } from './ticketed-events.repository';

/**
 * The seller's side of ticketed events (API.md section 10.1): create, list, update, publish
 * and close, the event's orders, and ticket check-in. Users need `events.manage` on the
 * event's seller; an event of a seller the caller cannot see does not exist for them.
 */
@Injectable()
export class TicketedEventsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(TicketedEventsRepository) private readonly events: TicketedEventsRepository,
    @Inject(EventOrdersRepository) private readonly orders: EventOrdersRepository,
    @Inject(AuthorizationService) private readonly authorization: AuthorizationService,
  ) {}

  async create(principal: Principal, input: CreateTicketedEventDto): Promise<TicketedEventResponseDto> {
    await this.authorization.authorizeSeller(principal, input.seller, {
      permission: 'events.manage',
      unknownSellerIsBadRequest: true,
    });
    const problems: FieldErrors = {};
    const dates = {
      startsAt: instantOf(input.starts_at),
      endsAt: instantOf(input.ends_at),
      salesStartAt: instantOf(input.sales_start_at),
      salesEndAt: instantOf(input.sales_end_at),
    };
    checkDates(dates, ALL_DATES, problems);
    const types = input.ticket_types.map((type, i) => newTicketType(type, `ticket_types.${i}`, problems));
    checkUniqueNames(
      input.ticket_types.map((t) => t.name),
      'ticket_types',
      new Set(),
      problems,
    );
    if (Object.keys(problems).length > 0) throw new ValidationError(problems);

    const id = await this.dataSource.transaction(async (manager) => {
      const event = await this.events.insert(manager, {
        sellerId: input.seller,
        name: input.name.trim(),
        description: input.description ?? '',
        venue: input.venue?.trim() ?? '',
        paymentTypes: input.payment_types,
        maxInstallments: input.max_installments ?? 1,
        ...dates,
      });
      await this.events.insertTicketTypes(manager, event.id, types as NewTicketType[]);
      return event.id;
    });
    return this.view(id);
  }

  async list(
    principal: Principal,
    query: TicketedEventListQueryDto,
    page: PageRequest,
  ): Promise<Page<TicketedEventResponseDto>> {
    if (query.seller) {
      await this.authorization.authorizeSeller(principal, query.seller, { permission: 'events.manage' });
    } else if (!(principal.kind === 'user' && principal.isSuperuser)) {
      throw ValidationError.of('seller', 'is required (only a superuser may list every seller)');
    }
    const rows = await this.events.list(query.seller ?? null, query.status, page);
    const types = await this.events.ticketTypes(rows.map((e) => e.id));
    const now = new Date();
    return toPage(
      rows,
      page,
      (e) => e.seq,
      (e) => toEventView(e, types.get(e.id) ?? [], now),
    );
  }

  /**
   * Texts, dates, payment options, status and ticket types. A ticket type's quantity may go
   * up, or down to what is sold and held but never below: the conditional UPDATE decides
   * against concurrent checkouts, not a value read before.
   */
  async update(principal: Principal, id: string, input: UpdateTicketedEventDto): Promise<TicketedEventResponseDto> {
    await this.authorize(principal, id);
    await this.dataSource.transaction(async (manager) => {
      const event = (await this.events.lock(manager, id))!;
      if (event.status === 'draft' && input.status === 'closed') {
        throw new ConflictError('invalid_state', 'A draft event is published before it can be closed.');
      }
      const problems: FieldErrors = {};
      const dates = {
        startsAt: input.starts_at ? instantOf(input.starts_at) : event.startsAt,
        endsAt: input.ends_at ? instantOf(input.ends_at) : event.endsAt,
        salesStartAt: input.sales_start_at ? instantOf(input.sales_start_at) : event.salesStartAt,
        salesEndAt: input.sales_end_at ? instantOf(input.sales_end_at) : event.salesEndAt,
      };
      checkDates(dates, new Set(DATE_FIELDS.filter((field) => input[field] !== undefined)), problems);
      const existing = (await this.events.ticketTypes([id], manager)).get(id)!;
      const patches = input.ticket_types ?? [];
      const added: NewTicketType[] = [];
      const changed: Array<{ path: string; id: string; name?: string; quantity?: number; maxPerOrder?: number }> = [];
      patches.forEach((patch, i) => {
        const path = `ticket_types.${i}`;
        if (patch.id === undefined) {
          const type = newTicketType(patch, path, problems);
          if (type) added.push(type);
          return;
        }
        const current = existing.find((t) => t.id === patch.id!.toLowerCase());
        if (!current) {
          problems[`${path}.id`] = ['is not a ticket type of this event'];
        } else if (changed.some((c) => c.id === patch.id!.toLowerCase())) {
          problems[`${path}.id`] = ['names a ticket type already changed earlier in ticket_types'];
        }
        // The price it has may be sent back (a client sending the whole object); another one is refused.
        const price = patch.price === undefined ? null : checkMoney(patch.price); // its format is the DTO's
        if (price && current && (!price.ok || price.value !== current.price)) {
          problems[`${path}.price`] = ['cannot change once the ticket type exists'];
        }
        changed.push({
          path,
          id: patch.id.toLowerCase(),
          name: patch.name === undefined ? undefined : ticketTypeName(patch.name),
          quantity: patch.quantity,
          maxPerOrder: patch.max_per_order,
        });
      });
      const renamed = new Set(changed.filter((c) => c.name !== undefined).map((c) => c.id));
      checkUniqueNames(
        patches.map((p) => p.name),
        'ticket_types',
        new Set(existing.filter((t) => !renamed.has(t.id)).map((t) => t.name)),
        problems,
      );
      if (existing.length + added.length > 50)
        problems.ticket_types = ['would give the event more than 50 ticket types'];
      if (Object.keys(problems).length > 0) throw new ValidationError(problems);

      const changes: EventChanges = {
        name: input.name?.trim(),
        description: input.description,
        venue: input.venue?.trim(),
        paymentTypes: input.payment_types,
        maxInstallments: input.max_installments,
        status: input.status,
        ...dates,
      };
      await this.events.update(manager, id, changes, changed.length > 0 || added.length > 0);
      for (const change of changed) {
        if (!(await this.events.updateTicketType(manager, id, change.id, change))) {
          const type = existing.find((t) => t.id === change.id)!;
          throw new ConflictError(
            'quantity_below_committed',
            `The quantity of "${type.name}" (${change.path}.quantity) cannot go below the seats already sold or held.`,
          );
        }
      }
      await this.events.insertTicketTypes(manager, id, added);
    });
    return this.view(id);
  }

  async listOrders(
    principal: Principal,
    eventId: string,
    query: EventOrderListQueryDto,
    page: PageRequest,
  ): Promise<Page<EventOrderDto>> {
    await this.authorize(principal, eventId);
    const rows = await this.orders.listForEvent(eventId, query.status, page);
    return toPage(rows, page, (o) => o.order.seq, toEventOrderView);
  }

  /** Admits the holder of a ticket of a paid order of this event, once. */
  async checkIn(principal: Principal, eventId: string, rawCode: string): Promise<CheckedInTicketDto> {
    await this.authorize(principal, eventId);
    const code = normaliseTicketCode(rawCode);
    const result = code ? await this.orders.checkIn(eventId, code) : null;
    if (!result) throw new NotFoundError('No ticket of a paid order of this event has this code.', 'ticket_not_found');
    if (result.already) {
      throw new ConflictError(
        'ticket_already_checked_in',
        `This ticket was already checked in at ${result.ticket.checkedInAt!.toISOString()}.`,
      );
    }
    const { ticket } = result;
    return {
      id: ticket.id,
      code: ticket.code,
      event: ticket.eventId,
      order: ticket.orderId,
      ticket_type: ticket.ticketTypeId,
      ticket_type_name: ticket.ticketTypeName,
      checked_in_at: ticket.checkedInAt!.toISOString(),
    };
  }

  /** The event, if the principal may manage it; otherwise it does not exist for them (404). */
  private async authorize(principal: Principal, id: string): Promise<TicketedEventRow> {
    const event = await this.events.find(id);
    if (!event) throw eventNotFound();
    await this.authorization.authorizeSeller(principal, event.sellerId, {
      permission: 'events.manage',
      hiddenAs: eventNotFound(),
    });
    return event;
  }

  private async view(id: string): Promise<TicketedEventResponseDto> {
    const event = (await this.events.find(id))!;
    const types = await this.events.ticketTypes([id]);
    return toEventView(event, types.get(id)!, new Date());
  }
}

export function eventNotFound(): NotFoundError {
  return new NotFoundError('Event not found.', 'event_not_found');
}

const DATE_FIELDS = ['starts_at', 'ends_at', 'sales_start_at', 'sales_end_at'] as const;
type DateField = (typeof DATE_FIELDS)[number];
const ALL_DATES: ReadonlySet<DateField> = new Set(DATE_FIELDS);

/**
 * The event's dates in order: starts_at ≤ ends_at, sales_start_at < sales_end_at ≤ ends_at.
 * A pair out of order is reported under the date the rule names, unless only the other one
 * was sent (a PATCH moving sales_start_at past the sales' end is the start's fault).
 */
function checkDates(
  dates: { startsAt: Date; endsAt: Date; salesStartAt: Date; salesEndAt: Date },
  sent: ReadonlySet<DateField>,
  problems: FieldErrors,
): void {
  const refuse = (field: DateField, message: string, other: DateField, otherMessage: string) => {
    const [path, text] = sent.has(field) || !sent.has(other) ? [field, message] : [other, otherMessage];
    (problems[path] ??= []).push(text);
  };
  if (dates.endsAt < dates.startsAt) {
    refuse('ends_at', 'must not be before starts_at', 'starts_at', 'must not be after ends_at');
  }
  if (dates.salesEndAt <= dates.salesStartAt) {
    refuse('sales_end_at', 'must be after sales_start_at', 'sales_start_at', 'must be before sales_end_at');
  } else if (dates.salesEndAt > dates.endsAt) {
    refuse('sales_end_at', 'must not be after ends_at', 'ends_at', 'must not be before sales_end_at');
  }
}

/** A ticket type's name as kept: without surrounding white space, in one Unicode form (NFC). */
function ticketTypeName(name: string): string {
  return name.trim().normalize('NFC');
}

/** Two names buyers could not tell apart (`Pista`, `pista `, or two Unicode forms of `Písta`) are one. */
function nameKey(name: string): string {
  return ticketTypeName(name).toLocaleLowerCase('pt-BR');
}

/** A new ticket type from its input, or null with its problems recorded under `path`. */
function newTicketType(
  input: { name?: string; price?: string; quantity?: number; max_per_order?: number },
  path: string,
  problems: FieldErrors,
): NewTicketType | null {
  for (const field of ['name', 'price', 'quantity', 'max_per_order'] as const) {
    if (input[field] === undefined) problems[`${path}.${field}`] = ['is required for a new ticket type'];
  }
  const price = checkMoney(input.price);
  if (input.price !== undefined && !price.ok) problems[`${path}.price`] = [price.message];
  if (!price.ok || input.name === undefined || input.quantity === undefined || input.max_per_order === undefined) {
    return null;
  }
  return {
    name: ticketTypeName(input.name),
    price: price.value,
    quantity: input.quantity,
    maxPerOrder: input.max_per_order,
  };
}

function checkUniqueNames(
  names: Array<string | undefined>,
  path: string,
  taken: Set<string>,
  problems: FieldErrors,
): void {
  const seen = new Set([...taken].map(nameKey));
  names.forEach((name, i) => {
    if (name === undefined) return;
    const key = nameKey(name);
    if (seen.has(key)) problems[`${path}.${i}.name`] = ['is already the name of another ticket type of this event'];
    seen.add(key);
  });
}
