import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, IsUUID, isUUID, MaxLength } from 'class-validator';
import { FieldRule } from '../../common/validation/field-rule';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';

const MAX_PARTICIPANTS = 50;
import type { Seller } from '../entities/seller.entity';
import { EmailField } from '../../common/validation/email.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';
import { DEVELOPER_LABEL } from '../../split/split-table';

export class CreateSellerDto {
  @ApiProperty({ example: 'Loja Exemplo Ltda' })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;

  @ApiProperty({
    example: '11222333000181',
    description: 'CPF (11 digits) or CNPJ (14 digits); punctuation allowed; check digits verified.',
  })
  @IsString()
  @MaxLength(30)
  document: string;

  @ApiProperty({ example: 'finance@loja.example' })
  @EmailField()
  email: string;
}

export class UpdateSellerDto {
  @ApiPropertyOptional()
  @IsOmittable()
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name?: string;

  @ApiPropertyOptional()
  @IsOmittable()
  @EmailField()
  email?: string;

  @ApiPropertyOptional({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: "The rate plan that prices this seller's payments.",
  })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  rate_plan?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: "A split plan of the seller's rate plan.",
  })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  split_plan?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: 'Unified account receiving `Programador` shares.',
  })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  developer_account?: string | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', format: 'uuid' },
    example: { Master: '6f1c7c52-5f5e-4d0a-9f35-1b1e9a0f2d11', Agente: '0c8f9d1e-2a3b-4c5d-8e7f-9a0b1c2d3e4f' },
    description: 'Split-table label → unified account id (not `Programador`, whose share goes to `developer_account`).',
  })
  @IsOmittable()
  @IsObject()
  @FieldRule('splitParticipants', (participants: unknown) => {
    if (!participants || typeof participants !== 'object') return null;
    const entries = Object.entries(participants);
    if (entries.length > MAX_PARTICIPANTS) return `must have at most ${MAX_PARTICIPANTS} labels`;
    const problems: Record<string, string> = {};
    for (const [label, account] of entries) {
      if (label.trim() === '' || label.length > 100) problems[label] = 'label must be 1 to 100 characters';
      else if (label === DEVELOPER_LABEL) {
        problems[label] = `the ${DEVELOPER_LABEL} share goes to developer_account; set that instead`;
      } else if (typeof account !== 'string' || !isUUID(account))
        problems[label] = 'must be the UUID of a unified account';
    }
    return Object.keys(problems).length > 0 ? problems : null;
  })
  split_participants?: Record<string, string>;
}

export class SellerResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: '11222333000181' }) document: string;
  @ApiProperty({ enum: ['cpf', 'cnpj'], example: 'cnpj' }) document_type: 'cpf' | 'cnpj';
  @ApiProperty() email: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string' }) rate_plan: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string' }) split_plan: string | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string' }) developer_account: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', format: 'uuid' } })
  split_participants: Record<string, string>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(seller: Seller): SellerResponseDto {
    return {
      id: seller.id,
      name: seller.name,
      document: seller.document,
      document_type: seller.document.length === 11 ? 'cpf' : 'cnpj',
      email: seller.email,
      rate_plan: seller.ratePlanId,
      split_plan: seller.splitPlanId,
      developer_account: seller.developerAccount,
      split_participants: seller.splitParticipants,
      created_at: seller.createdAt.toISOString(),
      updated_at: seller.updatedAt.toISOString(),
    };
  }
}
