import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { MoneyField } from '../../common/money/money.decorators';
import { FieldRule } from '../../common/validation/field-rule';
import { OptionalBody } from '../../common/validation/optional.decorator';
import { NestedObject } from '../../common/validation/nested.decorator';
import { CpfOrCnpj } from '../../sellers/document';
import { CARD_BRANDS, CardBrand, cardExpired, detectBrand, passesLuhn } from '../processor/card';
import { DUE_DATE_DESCRIPTION } from '../processor/payment-processor';
import { isSystemVoidReason, SYSTEM_VOID_REASONS } from '../void-reasons';
import { CreatedRangeQueryDto } from '../../common/pagination/created-range.dto';
import {
  EntryModeField,
  InstallmentsField,
  isCardPayment,
  isOtherPayment,
  PaymentTypeField,
} from '../../plans/dto/payment-fields';
import { FeeViewDto, SplitViewDto } from '../../plans/dto/resolution.dto';
import { ENTRY_MODES, EntryMode, PAYMENT_TYPES, PaymentType } from '../../split/table';
import { Checked, checkMoney, checkPercentage, formatMoney, formatPercentage } from '../../common/money/money';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import type { SplitRule } from '../entities/split-rule.entity';
import type { Transaction, TransactionStatus } from '../entities/transaction.entity';
import { EmailField } from '../../common/validation/email.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';

export const TRANSACTION_STATUSES: TransactionStatus[] = ['pending', 'approved', 'declined', 'voided'];
/** What made a charge: the API, a checkout, a subscription, or `seed:demo`. */
export const TRANSACTION_SOURCES = ['api', 'event_checkout', 'subscription', 'seed'] as const;
export type TransactionSource = (typeof TRANSACTION_SOURCES)[number];

export class CardDto {
  @ApiProperty({ example: '4111111111111111', description: 'Digits only; Luhn-checked. Never stored.' })
  @IsString()
  @Matches(/^\d{12,19}$/, { message: 'must be 12 to 19 digits' })
  @FieldRule('cardNumber', (number) => {
    if (typeof number !== 'string' || !/^\d{12,19}$/.test(number)) return null;
    if (!passesLuhn(number)) return 'is not a valid card number';
    return detectBrand(number) ? null : 'is a card of a brand that is not accepted';
  })
  number: string;

  @ApiProperty({ example: 'ANA SOUZA' })
  @IsString()
  @IsNotBlank()
  @MaxLength(100)
  @IsOneLine()
  holder_name: string;

  @ApiProperty({ example: 12, minimum: 1, maximum: 12 })
  @IsInt({ message: 'must be a month from 1 to 12' })
  @Min(1, { message: 'must be a month from 1 to 12' })
  @Max(12, { message: 'must be a month from 1 to 12' })
  exp_month: number;

  @ApiProperty({
    example: 2030,
    minimum: 2000,
    maximum: 2100,
    description: 'With exp_month: the card is good to the end of that month in Brasília (America/Sao_Paulo).',
  })
  @IsInt({ message: 'must be a year from 2000 to 2100' })
  @Min(2000, { message: 'must be a year from 2000 to 2100' })
  @Max(2100, { message: 'must be a year from 2000 to 2100' })
  @FieldRule('cardNotExpired', (year, card: CardDto) => {
    if (!Number.isInteger(year) || !Number.isInteger(card.exp_month)) return null;
    return cardExpired(card.exp_month, year, new Date()) ? 'must not be past: the card has expired' : null;
  })
  exp_year: number;

  @ApiProperty({ example: '123', description: '3 or 4 digits. Never stored.' })
  @IsString()
  @Matches(/^\d{3,4}$/, { message: 'must be 3 or 4 digits' })
  cvv: string;
}

export class CustomerDto {
  @ApiPropertyOptional({ example: 'Ana Souza' })
  @IsOptional()
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name?: string;

  @ApiPropertyOptional({ example: 'ana@example.com' })
  @IsOptional()
  @EmailField()
  email?: string;

  @ApiPropertyOptional({ example: '52998224725', description: 'CPF or CNPJ.' })
  @IsOptional()
  @IsString()
  @MaxLength(30)
  @CpfOrCnpj()
  document?: string;
}

export class CreateTransactionDto {
  // The amount the answer's examples (TransactionResponseDto: fee, split, net) come to.
  @MoneyField({ example: '100.00' })
  amount: string;

  @PaymentTypeField()
  payment_type: PaymentType;

  @InstallmentsField()
  installments?: number;

  @EntryModeField(
    'Card present or online (default online); picks the split table (API.md section 7) for every payment type, a pix or boleto paid at the counter included.',
  )
  entry_mode?: EntryMode;

  @ApiPropertyOptional({ type: CardDto, description: 'Required for credit and debit; refused for pix and boleto.' })
  @ValidateIf((payment: CreateTransactionDto, card) => card != null || isCardPayment(payment.payment_type))
  @NestedObject(() => CardDto)
  @FieldRule(
    'cardOfType',
    (card, payment: CreateTransactionDto) => {
      if (card == null) return isCardPayment(payment.payment_type) ? `is required for ${payment.payment_type}` : null;
      return isOtherPayment(payment.payment_type) ? `must not be sent for ${payment.payment_type}` : null;
    },
    { whenAbsent: true },
  )
  card?: CardDto;

  @ApiPropertyOptional({ example: 'Pedido 1234' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;

  @ApiPropertyOptional({ example: 'order-1234', description: "The seller's own reference." })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  reference?: string;

  @ApiPropertyOptional({ type: CustomerDto, description: 'Boleto needs name and document.' })
  @ValidateIf((payment: CreateTransactionDto, customer) => customer != null || payment.payment_type === 'boleto')
  @NestedObject(() => CustomerDto)
  @FieldRule(
    'customerOfType',
    (customer: CustomerDto | undefined, payment: CreateTransactionDto) => {
      if (payment.payment_type !== 'boleto') return null;
      const missing: Record<string, string> = {};
      if (customer?.name == null) missing.name = 'is required for boleto';
      if (customer?.document == null) missing.document = 'is required for boleto';
      return Object.keys(missing).length > 0 ? missing : null;
    },
    { whenAbsent: true },
  )
  customer?: CustomerDto;
}

/**
 * A credit or debit charge paid by a card kept on file (subscriptions): CreateTransactionDto's
 * rules without its card, which the processor's token stands for (a card sent too is refused).
 * Built in code, never a request body.
 */
export class CardOnFileChargeDto extends OmitType(CreateTransactionDto, ['card', 'payment_type'] as const) {
  @ApiProperty({ enum: ['credit', 'debit'] })
  @IsIn(['credit', 'debit'], { message: 'must be credit or debit for a card on file' })
  payment_type: 'credit' | 'debit';
}

export class TransactionListQueryDto extends CreatedRangeQueryDto {
  @ApiPropertyOptional({ enum: TRANSACTION_STATUSES })
  @IsOptional()
  @IsIn(TRANSACTION_STATUSES, { message: `must be one of ${TRANSACTION_STATUSES.join(', ')}` })
  status?: TransactionStatus;

  @PaymentTypeField({ required: false })
  payment_type?: PaymentType;

  @ApiPropertyOptional({ enum: CARD_BRANDS, description: 'The brand as the transaction records it, exactly.' })
  @IsOptional()
  @IsIn(CARD_BRANDS, { message: `must be one of ${CARD_BRANDS.join(', ')}` })
  card_brand?: CardBrand;

  @EntryModeField('Only card-present or only online payments.')
  entry_mode?: EntryMode;

  @ApiPropertyOptional({ example: 'order-1234', description: "The seller's own reference, exactly." })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  reference?: string;

  @ApiPropertyOptional({ enum: TRANSACTION_SOURCES })
  @IsOptional()
  @IsIn(TRANSACTION_SOURCES, { message: `must be one of ${TRANSACTION_SOURCES.join(', ')}` })
  source?: TransactionSource;

  @MoneyField({ allowZero: true, required: false, description: 'Smallest amount, inclusive.' })
  @IsOptional()
  amount_min?: string;

  @MoneyField({ allowZero: true, required: false, description: 'Largest amount, inclusive.' })
  @IsOptional()
  amount_max?: string;
}

@OptionalBody()
export class VoidTransactionDto {
  @ApiPropertyOptional({
    example: 'Customer cancelled the order',
    description: `Why, in the seller's words; recorded as \`void_reason\`. Not one of the reasons the platform gives its own voids (${Object.values(
      SYSTEM_VOID_REASONS,
    )
      .map((reason) => `\`${reason}\``)
      .join(', ')}), which say what happened to a payment, in any case.`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @FieldRule('notSystemVoidReason', (reason: unknown) =>
    typeof reason === 'string' && isSystemVoidReason(reason)
      ? `"${reason.trim()}" is a reason the platform gives its own voids; give the reason in other words`
      : null,
  )
  reason?: string;
}

export class CreateSplitRuleDto {
  @ApiProperty({
    format: 'uuid',
    description: 'A unified account (seller or sub-account) of the platform, of any seller.',
  })
  @IsUUID('all', { message: 'must be the UUID of a unified account' })
  recipient: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'number' }],
    example: '10.00',
    description:
      'Money for fixed: a decimal string ("10.00"). A percentage of the amount for percentage: a decimal string or a JSON number with at most 4 decimals ("12.5" or 12.5).',
  })
  @ValidateBy({
    name: 'isSplitAmount',
    validator: {
      validate: (value, args) => checkSplitAmount(args!.object as CreateSplitRuleDto, value).ok,
      defaultMessage: (args) => {
        const checked = checkSplitAmount(args!.object as CreateSplitRuleDto, args!.value);
        return checked.ok ? '' : checked.message;
      },
    },
  })
  amount: string | number;

  @ApiProperty({ enum: ['fixed', 'percentage'] })
  @IsIn(['fixed', 'percentage'], { message: 'must be fixed or percentage' })
  amount_type: 'fixed' | 'percentage';
}

/**
 * A split rule's amount by its type (API.md section 1): money, a decimal string only, for
 * `fixed`; a decimal string or a JSON number for `percentage`. With no valid type only its
 * kind is checked (the type's own error says the rest).
 */
export function checkSplitAmount(rule: Pick<CreateSplitRuleDto, 'amount_type'>, amount: unknown): Checked<number> {
  if (rule.amount_type === 'fixed') return checkMoney(amount);
  if (rule.amount_type === 'percentage') return checkPercentage(amount);
  return typeof amount === 'string' || typeof amount === 'number'
    ? { ok: true, value: 0 }
    : { ok: false, message: 'must be a decimal string' };
}

// ---- responses

export class SplitRuleResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) recipient: string;
  @ApiProperty({ example: '10.00' }) amount: string;
  @ApiProperty({ enum: ['fixed', 'percentage'] }) amount_type: 'fixed' | 'percentage';
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static of(rule: SplitRule): SplitRuleResponseDto {
    return {
      id: rule.id,
      recipient: rule.recipient,
      amount: rule.amountType === 'fixed' ? formatMoney(rule.fixedAmount!) : formatPercentage(rule.percentage!),
      amount_type: rule.amountType,
      created_at: rule.createdAt.toISOString(),
    };
  }
}

class CustomerViewDto {
  @ApiProperty({ nullable: true, type: 'string' }) name: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) email: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) document: string | null;
}

export class PixViewDto {
  @ApiProperty({ description: 'PIX copy-and-paste code.' }) qr_code: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

export class BoletoViewDto {
  @ApiProperty({ example: '34191790010104351004791020150008291070026000' }) digitable_line: string;
  @ApiProperty({
    format: 'date',
    description: DUE_DATE_DESCRIPTION,
  })
  due_date: string;
}

export class TransactionResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty({ example: '100.00' }) amount: string;
  @ApiProperty({ example: 'BRL' }) currency: string;
  @ApiProperty({ enum: PAYMENT_TYPES }) payment_type: PaymentType;
  @ApiProperty() installments: number;
  @ApiProperty({ nullable: true, type: 'string', example: 'Visa' }) card_brand: string | null;
  @ApiProperty({ nullable: true, type: 'string', example: '1111' }) card_last4: string | null;
  @ApiProperty({ enum: ENTRY_MODES, example: 'online' }) entry_mode: EntryMode;
  @ApiProperty({ enum: TRANSACTION_STATUSES }) status: TransactionStatus;
  @ApiProperty({ nullable: true, type: 'string' }) description: string | null;
  @ApiProperty({ enum: TRANSACTION_SOURCES }) source: string;
  @ApiProperty({ nullable: true, type: 'string' }) reference: string | null;
  @ApiProperty({ type: CustomerViewDto, nullable: true }) customer: CustomerViewDto | null;
  @ApiProperty({ type: FeeViewDto }) fees: FeeViewDto;
  @ApiProperty({ format: 'uuid' }) rate_plan: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string' }) split_plan: string | null;
  @ApiProperty({ type: SplitViewDto }) split: SplitViewDto;
  @ApiProperty({ type: [SplitRuleResponseDto] }) split_rules: SplitRuleResponseDto[];
  @ApiProperty({ type: PixViewDto, nullable: true }) pix: PixViewDto | null;
  @ApiProperty({ type: BoletoViewDto, nullable: true }) boleto: BoletoViewDto | null;
  @ApiProperty({ nullable: true, type: 'string', example: 'card_declined' }) decline_reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) approved_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) voided_at: string | null;
  @ApiProperty({
    nullable: true,
    type: 'string',
    description:
      "Why it was voided: the reason the void was given, or the service's own, such as `payment_expired` (a pix or boleto not paid in time), `charge_interrupted` (a charge the processor never received) or `checkout_expired` (a checkout's order not paid in time).",
  })
  void_reason: string | null;

  static of(tx: Transaction, rules: SplitRule[]): TransactionResponseDto {
    return {
      id: tx.id,
      seller: tx.sellerId,
      amount: formatMoney(tx.amount),
      currency: tx.currency,
      payment_type: tx.paymentType,
      installments: tx.installments,
      card_brand: tx.cardBrand,
      card_last4: tx.cardLast4,
      entry_mode: tx.entryMode,
      status: tx.status,
      description: tx.description,
      source: tx.source,
      reference: tx.reference,
      customer: tx.customer
        ? { name: tx.customer.name ?? null, email: tx.customer.email ?? null, document: tx.customer.document ?? null }
        : null,
      fees: FeeViewDto.of({ units: tx.feePercentage, fixed: tx.feeFixed, amount: tx.feeAmount }),
      rate_plan: tx.ratePlanId,
      split_plan: tx.splitPlanId,
      split: SplitViewDto.of(tx),
      split_rules: rules.map(SplitRuleResponseDto.of),
      pix: tx.pix,
      boleto: tx.boleto,
      decline_reason: tx.declineReason,
      created_at: tx.createdAt.toISOString(),
      updated_at: tx.updatedAt.toISOString(),
      approved_at: tx.approvedAt?.toISOString() ?? null,
      voided_at: tx.voidedAt?.toISOString() ?? null,
      void_reason: tx.voidReason,
    };
  }
}
