import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsDefined,
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto } from '../../common/pagination/pagination';
import { NestedObject, NestedObjects } from '../../common/validation/nested.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import { PAYMENT_TYPES, PaymentType } from '../../split/table';
import { BoletoViewDto, CardDto, PixViewDto } from '../../transactions/dto/transaction.dto';
import { ORDER_STATUSES, OrderStatus } from '../order-state';
import { InstallmentsUpTo12Field } from './ticketed-event.dto';
import { EmailField } from '../../common/validation/email.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';
import { CpfOrCnpj } from '../../sellers/document';

export const MAX_CHECKOUT_ITEMS = 20;
const quantityMessage = 'must be an integer of at least 1';

export class BuyerDto {
  @ApiProperty({ example: 'Ana Souza' })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;

  @ApiProperty({ example: 'ana@example.com', description: 'The tickets are e-mailed here.' })
  @EmailField()
  email: string;

  @ApiProperty({ example: '52998224725', description: 'CPF or CNPJ (punctuation accepted).' })
  @IsString()
  @MaxLength(30)
  @CpfOrCnpj()
  document: string;
}

export class CheckoutItemDto {
  @ApiProperty({ format: 'uuid', description: 'A ticket type of this event.' })
  @IsUUID('all', { message: 'must be the id of a ticket type of this event' })
  ticket_type: string;

  @ApiProperty({ example: 2, minimum: 1, description: "At most the ticket type's max_per_order." })
  @IsInt({ message: quantityMessage })
  @Min(1, { message: quantityMessage })
  quantity: number;
}

export class CheckoutPaymentDto {
  @ApiProperty({ enum: PAYMENT_TYPES, description: "One of the event's payment_types." })
  @IsIn(PAYMENT_TYPES, { message: `must be one of ${PAYMENT_TYPES.join(', ')}` })
  type: PaymentType;

  @InstallmentsUpTo12Field("Credit only; at most the event's max_installments.")
  installments?: number;

  @ApiPropertyOptional({
    type: CardDto,
    description: 'Required for credit and debit; refused for pix and boleto. Never stored.',
  })
  @IsOptional()
  @NestedObject(() => CardDto)
  card?: CardDto;
}

export class CheckoutDto {
  @ApiProperty({ type: BuyerDto })
  @IsDefined({ message: 'is required' })
  @NestedObject(() => BuyerDto)
  buyer: BuyerDto;

  @ApiProperty({ type: [CheckoutItemDto], description: `1 to ${MAX_CHECKOUT_ITEMS} items, each ticket type once.` })
  @IsArray()
  @ArrayMinSize(1, { message: 'must have at least one item' })
  @ArrayMaxSize(MAX_CHECKOUT_ITEMS, { message: `must have at most ${MAX_CHECKOUT_ITEMS} items` })
  @NestedObjects(() => CheckoutItemDto)
  items: CheckoutItemDto[];

  @ApiProperty({ type: CheckoutPaymentDto })
  @IsDefined({ message: 'is required' })
  @NestedObject(() => CheckoutPaymentDto)
  payment: CheckoutPaymentDto;
}

export class EventOrderListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ORDER_STATUSES })
  @IsOptional()
  @IsIn(ORDER_STATUSES, { message: `must be one of ${ORDER_STATUSES.join(', ')}` })
  status?: OrderStatus;
}

// ---- responses

class OrderItemViewDto {
  @ApiProperty({ format: 'uuid' }) ticket_type: string;
  @ApiProperty({ example: 'Pista', description: "The ticket type's name when the order was placed." })
  name: string;
  @ApiProperty({ example: 2 }) quantity: number;
  @ApiProperty({ example: '120.00', description: "The ticket type's price when the order was placed." })
  unit_price: string;
}

export class TicketViewDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) ticket_type: string;
  @ApiProperty({ example: '7KQ2M-XR4PD-9TZBH-C3W8N', description: 'Shown at the door; checked in once.' })
  code: string;
}

export class SellerTicketViewDto extends TicketViewDto {
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) checked_in_at: string | null;
}

class PublicBuyerDto {
  @ApiProperty({ example: 'Ana Souza' }) name: string;
  @ApiProperty({ example: 'a***@example.com', description: 'Masked.' }) email: string;
}

class BuyerViewDto {
  @ApiProperty() name: string;
  @ApiProperty() email: string;
  @ApiProperty({ description: 'CPF or CNPJ, digits only.' }) document: string;
}

/** Fields an order shows to everyone who knows its id (the buyer's page) and to the seller. */
class OrderViewBase {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) event: string;
  @ApiProperty({ enum: ORDER_STATUSES }) status: OrderStatus;
  @ApiProperty({ example: '240.00' }) amount: string;
  @ApiProperty({ enum: PAYMENT_TYPES }) payment_type: PaymentType;
  @ApiProperty() installments: number;
  @ApiProperty({ type: [OrderItemViewDto] }) items: OrderItemViewDto[];
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string', description: 'The unified transaction.' })
  transaction: string | null;
  @ApiProperty({ type: PixViewDto, nullable: true }) pix: PixViewDto | null;
  @ApiProperty({ type: BoletoViewDto, nullable: true }) boleto: BoletoViewDto | null;
  @ApiProperty({
    nullable: true,
    type: 'string',
    example: 'card_declined',
    description:
      "Why the order is not paid, as a code: the processor's decline (`card_declined`, `insufficient_funds`), `checkout_expired` or `not_paid_in_time` (not paid before `expires_at`), `payment_voided` (the seller voided or refunded the payment), or the platform's own reason for a void it made (`charge_interrupted`). Null while pending or paid.",
  })
  decline_reason: string | null;
  @ApiProperty({
    format: 'date-time',
    description:
      'A pending order releases its seats at this time. An order no longer pending (paid, declined, expired) keeps the time its hold had.',
  })
  expires_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** The checkout's answer and the public status of an order. */
export class CheckoutOrderDto extends OrderViewBase {
  @ApiProperty({ type: PublicBuyerDto }) buyer: PublicBuyerDto;
  @ApiProperty({
    type: [TicketViewDto],
    description: 'Issued when the order is paid; none once a paid order is canceled (its payment voided).',
  })
  tickets: TicketViewDto[];
}

/** An order as its seller sees it. */
export class EventOrderDto extends OrderViewBase {
  @ApiProperty({ type: BuyerViewDto }) buyer: BuyerViewDto;
  @ApiProperty({ type: [SellerTicketViewDto] }) tickets: SellerTicketViewDto[];
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) paid_at: string | null;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class CheckedInTicketDto extends SellerTicketViewDto {
  @ApiProperty({ format: 'uuid' }) event: string;
  @ApiProperty({ format: 'uuid' }) order: string;
  @ApiProperty({ example: 'Pista' }) ticket_type_name: string;
}
