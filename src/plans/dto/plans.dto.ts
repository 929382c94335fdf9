import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsDefined, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { MoneyField } from '../../common/money/money.decorators';
import { PageQueryDto } from '../../common/pagination/pagination';
import { EntryModeField, InstallmentsField, isCardPayment, PaymentTypeField } from './payment-fields';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import type { EntryMode, PaymentType } from '../../split/table';
import { formatFeeTable } from '../../split/fee-table';
import type { RatePlan } from '../entities/rate-plan.entity';
import type { SplitPlan } from '../entities/split-plan.entity';
import { IsOneLine } from '../../common/validation/one-line.decorator';

const MAX_DOCUMENT_LENGTH = 256 * 1024;

export class PlanSearchQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Only plans whose name contains this text (case-insensitive).' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;
}

const FEES_EXAMPLE = {
  credit1: {
    Visa: { percentage: '2.99', fixed: '0.50' },
    'Todas as bandeiras %': { percentage: '3.19', fixed: '0.50' },
  },
  debit1: {
    Visa: { percentage: '1.49', fixed: '0.00' },
    PIX: { percentage: '0.99', fixed: '0.00' },
    Boleto: { percentage: '0', fixed: '3.49' },
  },
};

export class RatePlanResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ description: 'Identifier in the central fee service.' }) external_id: string;
  @ApiProperty() active: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: FEES_EXAMPLE,
    description:
      'Fee table: "credit1".."credit21" / "debit1" → brand (or "Todas as bandeiras %") → {percentage, fixed}.',
  })
  fees: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(plan: RatePlan): RatePlanResponseDto {
    return {
      id: plan.id,
      name: plan.name,
      description: plan.description,
      external_id: plan.externalId,
      active: plan.active,
      fees: formatFeeTable(plan.fees),
      created_at: plan.createdAt.toISOString(),
      updated_at: plan.updatedAt.toISOString(),
    };
  }
}

const SPLIT_EXAMPLE = `{"credit1": {"Visa": {"Programador": 0.5, "Master": 1.0, "Agente": "0.75"}, "Todas as bandeiras %": {"Master": 1.2}}, "debit1": {"PIX": {"Master": 0.2}}}`;

export class CreateSplitPlanDto {
  @ApiProperty({ example: 'Parceiros 2026', description: 'Display name.' })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;

  @ApiProperty({
    format: 'uuid',
    description: 'The rate plan whose cells this plan distributes (unknown: 400 rate_plan_not_found).',
  })
  @IsString()
  @MaxLength(100)
  rate_plan: string;

  @ApiProperty({
    example: SPLIT_EXAMPLE,
    description:
      'Split table for card-present payments, as a JSON string (single quotes accepted): payment type + installments → brand → label → percentage, at most 50 labels a cell.',
  })
  @IsString()
  @MaxLength(MAX_DOCUMENT_LENGTH)
  split_details: string;

  @ApiProperty({ example: SPLIT_EXAMPLE, description: 'Split table for online / keyed payments, same format.' })
  @IsString()
  @MaxLength(MAX_DOCUMENT_LENGTH)
  split_details_online: string;

  /** Not accepted as input (spec 2.3): a value sent is ignored and the plan stores true. */
  @ApiPropertyOptional({ type: 'boolean', description: 'Ignored: a split plan always stores true (spec 2.3).' })
  @Allow()
  automatic_developer_fee?: unknown;
}

export class SplitPlanResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'uuid' }) rate_plan: string;
  @ApiProperty({ description: 'As stored: the input with single quotes replaced by double quotes.' })
  split_details: string;
  @ApiProperty() split_details_online: string;
  @ApiProperty({ description: 'Always true.' }) automatic_developer_fee: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static of(plan: SplitPlan): SplitPlanResponseDto {
    return {
      id: plan.id,
      name: plan.name,
      rate_plan: plan.ratePlanId,
      split_details: plan.splitDetails,
      split_details_online: plan.splitDetailsOnline,
      automatic_developer_fee: plan.automaticDeveloperFee,
      created_at: plan.createdAt.toISOString(),
    };
  }
}

export class SimulateSplitDto {
  // The amount the examples of the answer (ResolutionResponseDto) come to, with SPLIT_EXAMPLE's Visa cell.
  @MoneyField({ example: '100.00' })
  amount: string;

  @PaymentTypeField()
  payment_type: PaymentType;

  @InstallmentsField()
  installments?: number;

  @ApiPropertyOptional({ example: 'Visa', description: 'Required for credit and debit.' })
  @ValidateIf((input: SimulateSplitDto, brand) => brand != null || isCardPayment(input.payment_type))
  @IsDefined({ message: 'is required for credit and debit' })
  @IsString()
  @IsNotBlank()
  @MaxLength(60)
  card_brand?: string;

  @EntryModeField()
  entry_mode?: EntryMode;
}
