import { applyDecorators } from '@nestjs/common';
import { ApiHideProperty, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateBy,
} from 'class-validator';
import { formatMoney } from '../../common/money/money';
import { MoneyField } from '../../common/money/money.decorators';
import { PageQueryDto } from '../../common/pagination/pagination';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';
import { INTERVALS, Interval } from '../billing-period';
import type { SubscriptionPaymentType, SubscriptionPlan } from '../entities/subscription.types';

export const SUBSCRIPTION_PAYMENT_TYPES: SubscriptionPaymentType[] = ['credit', 'pix'];

export class CreateSubscriptionPlanDto {
  @ApiProperty({ format: 'uuid', description: 'The seller that sells the plan.' })
  @IsUUID('all', { message: 'must be a UUID' })
  seller: string;

  @ApiProperty({ example: 'Clube do Café', maxLength: 200, description: 'One line (no control characters).' })
  @IsString()
  @IsNotBlank()
  @IsOneLine()
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'Um pacote de café especial por mês.', maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @MoneyField({ example: '49.90', description: 'Price of each period, BRL. Immutable: make a new plan to change it.' })
  amount: string;

  @ApiProperty({ enum: INTERVALS, description: 'Unit of the billing period. Immutable.' })
  @IsIn(INTERVALS, { message: `must be one of ${INTERVALS.join(', ')}` })
  interval: Interval;

  @ApiPropertyOptional({ minimum: 1, maximum: 12, default: 1, description: 'Units per period. Immutable.' })
  @IsOptional()
  @IsInt({ message: 'must be an integer from 1 to 12' })
  @Min(1, { message: 'must be an integer from 1 to 12' })
  @Max(12, { message: 'must be an integer from 1 to 12' })
  interval_count?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 365, default: 0, description: 'Free days before the first charge.' })
  @IsOptional()
  @IsInt({ message: 'must be an integer from 0 to 365' })
  @Min(0, { message: 'must be an integer from 0 to 365' })
  @Max(365, { message: 'must be an integer from 0 to 365' })
  trial_days?: number;

  @ApiProperty({ enum: SUBSCRIPTION_PAYMENT_TYPES, isArray: true, example: ['credit', 'pix'] })
  @IsArray()
  @ArrayMinSize(1, { message: 'must name at least one payment type' })
  @ArrayMaxSize(2)
  @ArrayUnique({ message: 'must not repeat a payment type' })
  @IsIn(SUBSCRIPTION_PAYMENT_TYPES, { each: true, message: 'must hold only credit and/or pix' })
  payment_types: SubscriptionPaymentType[];

  @ApiPropertyOptional({ default: true, description: 'Only active plans can be subscribed to.' })
  @IsOptional()
  @IsBoolean({ message: 'must be true or false' })
  active?: boolean;
}

const FIXED_TERMS = 'cannot be changed: price, interval, trial and payment types are fixed; create a new plan';

/** A field that PATCH refuses with a message saying why (the plan's terms, and its seller, never change). */
function Immutable(message = FIXED_TERMS): PropertyDecorator {
  return applyDecorators(
    IsOmittable(),
    ValidateBy({ name: 'immutable', validator: { validate: () => false, defaultMessage: () => message } }),
  );
}

export class UpdateSubscriptionPlanDto {
  @ApiPropertyOptional({ maxLength: 200, description: 'One line (no control characters).' })
  @IsOmittable()
  @IsString()
  @IsNotBlank()
  @IsOneLine()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: 'string', maxLength: 2000, nullable: true, description: 'null clears it.' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  @ApiPropertyOptional({ description: 'false: no new subscribers (current ones keep renewing).' })
  @IsOmittable()
  @IsBoolean({ message: 'must be true or false' })
  active?: boolean;

  @ApiHideProperty() @Immutable() amount?: unknown;
  @ApiHideProperty() @Immutable() interval?: unknown;
  @ApiHideProperty() @Immutable() interval_count?: unknown;
  @ApiHideProperty() @Immutable() trial_days?: unknown;
  @ApiHideProperty() @Immutable() payment_types?: unknown;
  @ApiHideProperty() @Immutable('cannot be changed: a plan belongs to its seller for good') seller?: unknown;
}

export class PlanListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: "The seller's plans; required unless superuser." })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  seller?: string;
}

/** The terms of a plan, as both its seller and the public page see them. */
class PlanTermsDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: 'string', nullable: true }) description: string | null;
  @ApiProperty({ example: '49.90' }) amount: string;
  @ApiProperty({ enum: INTERVALS }) interval: Interval;
  @ApiProperty() interval_count: number;
  @ApiProperty() trial_days: number;
  @ApiProperty({ enum: SUBSCRIPTION_PAYMENT_TYPES, isArray: true }) payment_types: SubscriptionPaymentType[];
}

export class SubscriptionPlanResponseDto extends PlanTermsDto {
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty() active: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(plan: SubscriptionPlan): SubscriptionPlanResponseDto {
    return {
      ...termsOf(plan),
      seller: plan.sellerId,
      active: plan.active,
      created_at: plan.createdAt.toISOString(),
      updated_at: plan.updatedAt.toISOString(),
    };
  }
}

export class PublicSellerDto {
  @ApiProperty() name: string;
}

/** What the public subscription page shows of a plan. */
export class PublicPlanResponseDto extends PlanTermsDto {
  @ApiProperty({ type: PublicSellerDto }) seller: PublicSellerDto;

  static of(plan: SubscriptionPlan, sellerName: string): PublicPlanResponseDto {
    return { ...termsOf(plan), seller: { name: sellerName } };
  }
}

function termsOf(plan: SubscriptionPlan): PlanTermsDto {
  return {
    id: plan.id,
    name: plan.name,
    description: plan.description,
    amount: formatMoney(plan.amount),
    interval: plan.interval,
    interval_count: plan.intervalCount,
    trial_days: plan.trialDays,
    payment_types: plan.paymentTypes,
  };
}
