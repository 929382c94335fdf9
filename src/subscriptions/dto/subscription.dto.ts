import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsIn, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { formatMoney } from '../../common/money/money';
import { PageQueryDto } from '../../common/pagination/pagination';
import { FieldRule } from '../../common/validation/field-rule';
import { OptionalBody } from '../../common/validation/optional.decorator';
import { NestedObject } from '../../common/validation/nested.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import { CpfOrCnpj } from '../../sellers/document';
import { CardDto } from '../../transactions/dto/transaction.dto';
import type {
  Subscription,
  SubscriptionCharge,
  SubscriptionPaymentType,
  SubscriptionStatus,
} from '../entities/subscription.types';
import { PublicPlanResponseDto, SUBSCRIPTION_PAYMENT_TYPES } from './subscription-plan.dto';
import { EmailField } from '../../common/validation/email.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';

export const SUBSCRIPTION_STATUSES: SubscriptionStatus[] = ['trialing', 'active', 'incomplete', 'past_due', 'canceled'];

export class SubscriberDto {
  @ApiProperty({ example: 'Ana Souza', maxLength: 200 })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;

  @ApiProperty({ example: 'ana@example.com' })
  @EmailField()
  email: string;

  @ApiProperty({ example: '52998224725', description: 'CPF or CNPJ (punctuation accepted).' })
  @IsString()
  @MaxLength(30)
  @CpfOrCnpj()
  document: string;
}

export class SubscriptionPaymentDto {
  @ApiProperty({ enum: SUBSCRIPTION_PAYMENT_TYPES, description: 'One of the payment types the plan offers.' })
  @IsIn(SUBSCRIPTION_PAYMENT_TYPES, { message: `must be one of ${SUBSCRIPTION_PAYMENT_TYPES.join(', ')}` })
  type: SubscriptionPaymentType;

  @ApiPropertyOptional({
    type: CardDto,
    description: "Required for credit; kept only as the processor's card token (never the number or CVV).",
  })
  @ValidateIf((payment: SubscriptionPaymentDto, card) => card != null || payment.type === 'credit')
  @NestedObject(() => CardDto)
  @FieldRule(
    'cardOfType',
    (card, payment: SubscriptionPaymentDto) => {
      if (card == null) return payment.type === 'credit' ? 'is required for credit' : null;
      return payment.type === 'pix' ? 'must not be sent for pix' : null;
    },
    { whenAbsent: true },
  )
  card?: CardDto;
}

export class SubscribeDto {
  @ApiProperty({ type: SubscriberDto })
  @IsDefined({ message: 'is required' })
  @NestedObject(() => SubscriberDto)
  subscriber: SubscriberDto;

  @ApiProperty({ type: SubscriptionPaymentDto })
  @IsDefined({ message: 'is required' })
  @NestedObject(() => SubscriptionPaymentDto)
  payment: SubscriptionPaymentDto;
}

@OptionalBody()
export class CancelSubscriptionDto {
  @ApiPropertyOptional({
    default: true,
    description:
      'true (default): the subscription runs to the end of the paid period, then is canceled with no further ' +
      'charge. false (sellers only): canceled now. A past_due or incomplete subscription has no paid period left ' +
      'and is canceled now either way.',
  })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  at_period_end?: boolean;
}

export class SubscriberListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES })
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES, { message: `must be one of ${SUBSCRIPTION_STATUSES.join(', ')}` })
  status?: SubscriptionStatus;
}

export class PublicCardDto {
  @ApiProperty({ example: 'Visa' }) brand: string;
  @ApiProperty({ example: '1111' }) last4: string;
}

export class StoredCardDto extends PublicCardDto {
  @ApiProperty({ example: 12 }) exp_month: number;
  @ApiProperty({ example: 2031 }) exp_year: number;
}

export class PixChargeDto {
  @ApiProperty({ description: 'PIX "copia e cola" payload.' }) qr_code: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { ...dateTime, nullable: true } as const;

/** A subscription as its seller sees it (list of subscribers, cancel, webhook events). */
export class SubscriptionResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty({ format: 'uuid' }) plan: string;
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES }) status: SubscriptionStatus;
  @ApiProperty() name: string;
  @ApiProperty() email: string;
  @ApiProperty() document: string;
  @ApiProperty({ enum: SUBSCRIPTION_PAYMENT_TYPES }) payment_type: SubscriptionPaymentType;
  @ApiProperty({ type: StoredCardDto, nullable: true }) card: StoredCardDto | null;
  @ApiProperty({ ...dateTime, description: 'Start of the current period (the trial while trialing).' })
  current_period_start: string;
  @ApiProperty({ ...dateTime, description: 'End of the current period.' })
  current_period_end: string;
  @ApiProperty(nullableDateTime) trial_end: string | null;
  @ApiProperty({
    ...nullableDateTime,
    description: 'When the renewal job next acts: the next charge, a retry, or a pix due date. Null once canceled.',
  })
  next_charge_at: string | null;
  @ApiProperty() cancel_at_period_end: boolean;
  @ApiProperty(nullableDateTime) canceled_at: string | null;
  @ApiProperty(dateTime) created_at: string;
  @ApiProperty(dateTime) updated_at: string;

  static of(s: Subscription): SubscriptionResponseDto {
    return {
      id: s.id,
      seller: s.sellerId,
      plan: s.planId,
      status: s.status,
      name: s.name,
      email: s.email,
      document: s.document,
      payment_type: s.paymentType,
      card: s.card
        ? { brand: s.card.brand, last4: s.card.last4, exp_month: s.card.expMonth, exp_year: s.card.expYear }
        : null,
      current_period_start: s.currentPeriodStart.toISOString(),
      current_period_end: s.currentPeriodEnd.toISOString(),
      trial_end: iso(s.trialEnd),
      next_charge_at: iso(s.nextChargeAt),
      cancel_at_period_end: s.cancelAtPeriodEnd,
      canceled_at: iso(s.canceledAt),
      created_at: s.createdAt.toISOString(),
      updated_at: s.updatedAt.toISOString(),
    };
  }
}

/** The answer to a subscription: the only place the manage token is ever shown (it is also e-mailed). */
export class SubscribeResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['trialing', 'active', 'incomplete'] }) status: SubscriptionStatus;
  @ApiProperty({ format: 'uuid' }) plan: string;
  @ApiProperty(dateTime) current_period_start: string;
  @ApiProperty(dateTime) current_period_end: string;
  @ApiProperty(nullableDateTime) next_charge_at: string | null;
  @ApiProperty(nullableDateTime) trial_end: string | null;
  @ApiProperty({ type: 'string', format: 'uuid', nullable: true, description: 'The first charge; null in a trial.' })
  transaction: string | null;
  @ApiProperty({ type: StoredCardDto, nullable: true }) card: StoredCardDto | null;
  @ApiProperty({ type: PixChargeDto, nullable: true, description: 'What to pay for an incomplete pix subscription.' })
  pix: PixChargeDto | null;
  @ApiProperty({
    description:
      'Secret for self-service cancellation (POST /subscriptions/subscriber/{id}/cancel/ with ' +
      '"Authorization: Bearer <manage_token>"). Shown once; stored only as a hash.',
  })
  manage_token: string;

  /** `tx`: the first charge (none in a trial). */
  static of(
    s: Subscription,
    tx: { id: string; pix: { qr_code: string; expires_at: string } | null } | null,
    manageToken: string,
  ): SubscribeResponseDto {
    const view = SubscriptionResponseDto.of(s);
    return {
      id: s.id,
      status: s.status,
      plan: s.planId,
      current_period_start: view.current_period_start,
      current_period_end: view.current_period_end,
      next_charge_at: view.next_charge_at,
      trial_end: view.trial_end,
      transaction: tx?.id ?? null,
      card: view.card,
      pix: tx?.pix ?? null,
      manage_token: manageToken,
    };
  }
}

export class SubscriberChargeDto {
  @ApiProperty({ format: 'uuid' }) transaction: string;
  @ApiProperty({ example: '49.90' }) amount: string;
  @ApiProperty({ enum: ['pending', 'approved', 'declined', 'voided'] }) status: string;
  @ApiProperty(dateTime) period_start: string;
  @ApiProperty(dateTime) created_at: string;
}

/** What the public subscriber page shows (e-mail masked, no document). */
export class PublicSubscriberResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: SUBSCRIPTION_STATUSES }) status: SubscriptionStatus;
  @ApiProperty({ type: PublicPlanResponseDto }) plan: PublicPlanResponseDto;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'a***@example.com' }) email: string;
  @ApiProperty({ type: PublicCardDto, nullable: true }) card: PublicCardDto | null;
  @ApiProperty(dateTime) current_period_end: string;
  @ApiProperty(nullableDateTime) next_charge_at: string | null;
  @ApiProperty() cancel_at_period_end: boolean;
  @ApiProperty(nullableDateTime) canceled_at: string | null;
  @ApiProperty({ type: [SubscriberChargeDto], description: 'Charges, oldest first.' })
  charges: SubscriberChargeDto[];
  @ApiProperty({
    type: PixChargeDto,
    nullable: true,
    description:
      "The pix to pay now: the open charge of a pix subscription (incomplete, or a renewal's due), else null.",
  })
  pix: PixChargeDto | null;

  /** `pix`: the open pix charge's payment data, if any. */
  static of(
    s: Subscription,
    plan: PublicPlanResponseDto,
    charges: SubscriptionCharge[],
    pix: PixChargeDto | null,
  ): PublicSubscriberResponseDto {
    return {
      id: s.id,
      status: s.status,
      plan,
      name: s.name,
      email: maskEmail(s.email),
      card: s.card ? { brand: s.card.brand, last4: s.card.last4 } : null,
      current_period_end: s.currentPeriodEnd.toISOString(),
      next_charge_at: iso(s.nextChargeAt),
      cancel_at_period_end: s.cancelAtPeriodEnd,
      canceled_at: iso(s.canceledAt),
      charges: charges
        .filter((c) => c.transactionId !== null && c.status !== 'processing' && c.status !== 'interrupted')
        .map((c) => ({
          transaction: c.transactionId!,
          amount: formatMoney(c.amount),
          status: c.status,
          period_start: c.periodStart.toISOString(),
          created_at: c.createdAt.toISOString(),
        })),
      pix,
    };
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** `joana@example.com` → `j***@example.com`: enough for the subscriber to recognise, too little to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return '***';
  return `${email[0]}***${email.slice(at)}`;
}
