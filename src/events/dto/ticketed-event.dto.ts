import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { MoneyField } from '../../common/money/money.decorators';
import { PageQueryDto } from '../../common/pagination/pagination';
import { IsDateTime } from '../../common/validation/date-time.decorator';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { NestedObjects } from '../../common/validation/nested.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';
import { PAYMENT_TYPES, PaymentType } from '../../split/table';

export const EVENT_STATUSES = ['draft', 'published', 'closed'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];
export const MAX_TICKET_TYPES = 50;
export const MAX_TICKETS_PER_TYPE = 1_000_000;
export const MAX_PER_ORDER_LIMIT = 100;

const quantityMessage = `must be an integer from 0 to ${MAX_TICKETS_PER_TYPE}`;
const maxPerOrderMessage = `must be an integer from 1 to ${MAX_PER_ORDER_LIMIT}`;
const installmentsMessage = 'must be an integer from 1 to 12';

export class TicketTypeInputDto {
  @ApiProperty({
    example: 'Pista',
    description: `One line (no control characters), kept trimmed; unique in the event, ignoring case, surrounding spaces and Unicode form.`,
  })
  @IsString()
  @IsNotBlank()
  @IsOneLine()
  @MaxLength(100)
  name: string;

  @MoneyField({ example: '120.00', description: 'Price of one ticket (BRL decimal string, above zero).' })
  price: string;

  @ApiProperty({ example: 500, minimum: 0, maximum: MAX_TICKETS_PER_TYPE, description: 'Seats for sale.' })
  @IsInt({ message: quantityMessage })
  @Min(0, { message: quantityMessage })
  @Max(MAX_TICKETS_PER_TYPE, { message: quantityMessage })
  quantity: number;

  @ApiProperty({
    example: 6,
    minimum: 1,
    maximum: MAX_PER_ORDER_LIMIT,
    description: 'Most tickets of this type in one order.',
  })
  @IsInt({ message: maxPerOrderMessage })
  @Min(1, { message: maxPerOrderMessage })
  @Max(MAX_PER_ORDER_LIMIT, { message: maxPerOrderMessage })
  max_per_order: number;
}

/** A ticket type in PATCH: with `id`, changes that type (quantity never below what is sold or held); without, adds one. */
export class TicketTypePatchDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'An existing ticket type of the event; leave out to add one.' })
  @IsOmittable() // null is no id: refused (it answered 500)
  @IsUUID('all', { message: 'must be the id of a ticket type of this event' })
  id?: string;

  @ApiPropertyOptional({
    example: 'Pista',
    description: `Required when adding. One line (no control characters), kept trimmed; unique in the event, ignoring case, surrounding spaces and Unicode form.`,
  })
  @IsOmittable()
  @IsString()
  @IsNotBlank()
  @IsOneLine()
  @MaxLength(100)
  name?: string;

  @MoneyField({
    required: false,
    example: '120.00',
    description:
      'Required when adding; the price of an existing type never changes (sending its current price back is accepted).',
  })
  @IsOptional()
  price?: string;

  @ApiPropertyOptional({ example: 800, minimum: 0, maximum: MAX_TICKETS_PER_TYPE })
  @IsOmittable()
  @IsInt({ message: quantityMessage })
  @Min(0, { message: quantityMessage })
  @Max(MAX_TICKETS_PER_TYPE, { message: quantityMessage })
  quantity?: number;

  @ApiPropertyOptional({ example: 6, minimum: 1, maximum: MAX_PER_ORDER_LIMIT })
  @IsOmittable()
  @IsInt({ message: maxPerOrderMessage })
  @Min(1, { message: maxPerOrderMessage })
  @Max(MAX_PER_ORDER_LIMIT, { message: maxPerOrderMessage })
  max_per_order?: number;
}

/** The payment types an event takes: a non-empty subset of credit, debit, pix and boleto. */
function PaymentTypesField(required: boolean): PropertyDecorator {
  return applyDecorators(
    (required ? ApiProperty : ApiPropertyOptional)({
      enum: PAYMENT_TYPES,
      isArray: true,
      example: ['credit', 'pix'],
      description: 'Payment types buyers may use.',
    }),
    ...(required ? [] : [IsOmittable()]),
    IsArray({ message: `must be a list of ${PAYMENT_TYPES.join(', ')}` }),
    ArrayMinSize(1, { message: 'must name at least one payment type' }),
    ArrayUnique({ message: 'must not repeat a payment type' }),
    IsIn(PAYMENT_TYPES, { each: true, message: `must each be one of ${PAYMENT_TYPES.join(', ')}` }),
  );
}

/** An optional number of credit installments, 1 to 12. */
export function InstallmentsUpTo12Field(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ minimum: 1, maximum: 12, default: 1, description }),
    IsOmittable(),
    IsInt({ message: installmentsMessage }),
    Min(1, { message: installmentsMessage }),
    Max(12, { message: installmentsMessage }),
  );
}

export class CreateTicketedEventDto {
  @ApiProperty({ format: 'uuid', description: 'The seller that sells the tickets.' })
  @IsUUID('all', { message: 'must be the UUID of a seller' })
  seller: string;

  @ApiProperty({ example: 'Festival de Verão', description: 'One line (no control characters), kept trimmed.' })
  @IsString()
  @IsNotBlank()
  @IsOneLine()
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'Três palcos, vinte bandas.' })
  @IsOmittable()
  @IsString()
  @MaxLength(5000)
  description?: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-20T20:00:00Z' })
  @IsDateTime()
  starts_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-21T04:00:00Z', description: 'Not before starts_at.' })
  @IsDateTime()
  ends_at: string;

  @ApiPropertyOptional({
    example: 'Arena Central, São Paulo',
    description: 'One line (no control characters), kept trimmed.',
  })
  @IsOmittable()
  @IsString()
  @IsOneLine()
  @MaxLength(300)
  venue?: string;

  @PaymentTypesField(true)
  payment_types: PaymentType[];

  @InstallmentsUpTo12Field('Most credit installments a buyer may choose.')
  max_installments?: number;

  @ApiProperty({ type: [TicketTypeInputDto], description: `1 to ${MAX_TICKET_TYPES} ticket types, names unique.` })
  @IsArray()
  @ArrayMinSize(1, { message: 'must have at least one ticket type' })
  @ArrayMaxSize(MAX_TICKET_TYPES, { message: `must have at most ${MAX_TICKET_TYPES} ticket types` })
  @NestedObjects(() => TicketTypeInputDto)
  ticket_types: TicketTypeInputDto[];

  @ApiProperty({ format: 'date-time', example: '2026-11-01T12:00:00Z', description: 'Sales open.' })
  @IsDateTime()
  sales_start_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-12-20T23:00:00Z',
    description: 'Sales close; after sales_start_at and not after ends_at.',
  })
  @IsDateTime()
  sales_end_at: string;
}

export class UpdateTicketedEventDto {
  @ApiPropertyOptional({ example: 'Festival de Verão', description: 'One line (no control characters), kept trimmed.' })
  @IsOmittable()
  @IsString()
  @IsNotBlank()
  @IsOneLine()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional()
  @IsOmittable()
  @IsString()
  @MaxLength(5000)
  description?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOmittable()
  @IsDateTime()
  starts_at?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOmittable()
  @IsDateTime()
  ends_at?: string;

  @ApiPropertyOptional({ description: 'One line (no control characters), kept trimmed.' })
  @IsOmittable()
  @IsString()
  @IsOneLine()
  @MaxLength(300)
  venue?: string;

  @PaymentTypesField(false)
  payment_types?: PaymentType[];

  @InstallmentsUpTo12Field('Most credit installments a buyer may choose.')
  max_installments?: number;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOmittable()
  @IsDateTime()
  sales_start_at?: string;

  @ApiPropertyOptional({ format: 'date-time' })
  @IsOmittable()
  @IsDateTime()
  sales_end_at?: string;

  @ApiPropertyOptional({
    enum: ['published', 'closed'],
    description:
      'draft → published (on sale within the sales window), published → closed, closed → published; closing a draft is 409 `invalid_state`.',
  })
  @IsOmittable()
  @IsIn(['published', 'closed'], { message: 'must be published or closed' })
  status?: 'published' | 'closed';

  @ApiPropertyOptional({ type: [TicketTypePatchDto], description: 'Ticket types to add (no id) or change (with id).' })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_TICKET_TYPES, { message: `must have at most ${MAX_TICKET_TYPES} ticket types` })
  @NestedObjects(() => TicketTypePatchDto)
  ticket_types?: TicketTypePatchDto[];
}

export class TicketedEventListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The seller whose events to list; required unless superuser.' })
  @IsOptional()
  @IsUUID('all', { message: 'must be the UUID of a seller' })
  seller?: string;

  @ApiPropertyOptional({ enum: EVENT_STATUSES })
  @IsOptional()
  @IsIn(EVENT_STATUSES, { message: `must be one of ${EVENT_STATUSES.join(', ')}` })
  status?: EventStatus;
}

// ---- responses

export class TicketTypeResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Pista' }) name: string;
  @ApiProperty({ example: '120.00' }) price: string;
  @ApiProperty({ example: 500 }) quantity: number;
  @ApiProperty({ example: 6 }) max_per_order: number;
  @ApiProperty({ example: 120, description: 'Seats of paid orders.' }) sold: number;
  @ApiProperty({ example: 4, description: 'Seats held by pending orders.' }) held: number;
  @ApiProperty({ example: 376, description: 'quantity - sold - held.' }) available: number;
}

export class TicketedEventResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ format: 'date-time' }) starts_at: string;
  @ApiProperty({ format: 'date-time' }) ends_at: string;
  @ApiProperty() venue: string;
  @ApiProperty({ enum: EVENT_STATUSES }) status: EventStatus;
  @ApiProperty({ enum: PAYMENT_TYPES, isArray: true }) payment_types: PaymentType[];
  @ApiProperty({ minimum: 1, maximum: 12 }) max_installments: number;
  @ApiProperty({ type: [TicketTypeResponseDto] }) ticket_types: TicketTypeResponseDto[];
  @ApiProperty({ format: 'date-time' }) sales_start_at: string;
  @ApiProperty({ format: 'date-time' }) sales_end_at: string;
  @ApiProperty({ description: 'Published and within the sales window now.' }) sales_open: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class PublicTicketTypeDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'Pista' }) name: string;
  @ApiProperty({ example: '120.00' }) price: string;
  @ApiProperty({ example: 376, description: 'Seats left now.' }) available: number;
  @ApiProperty({ example: 6 }) max_per_order: number;
}

class PublicSellerDto {
  @ApiProperty({ example: 'Loja Teste' }) name: string;
}

export class PublicTicketedEventDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ format: 'date-time' }) starts_at: string;
  @ApiProperty({ format: 'date-time' }) ends_at: string;
  @ApiProperty() venue: string;
  @ApiProperty({ type: PublicSellerDto }) seller: PublicSellerDto;
  @ApiProperty({ type: [PublicTicketTypeDto] }) ticket_types: PublicTicketTypeDto[];
  @ApiProperty({
    enum: PAYMENT_TYPES,
    isArray: true,
    description:
      "The event's payment types a checkout can use now: boleto only while it would be paid (or its seats released) before the event starts, pix only while its 30 minutes would end before the event ends.",
  })
  payment_types: PaymentType[];
  @ApiProperty({ minimum: 1, maximum: 12 }) max_installments: number;
  @ApiProperty({ format: 'date-time' }) sales_start_at: string;
  @ApiProperty({ format: 'date-time' }) sales_end_at: string;
  @ApiProperty({ description: 'Whether a checkout can be made now.' }) sales_open: boolean;
}
