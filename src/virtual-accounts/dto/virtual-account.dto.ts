import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsIn,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { formatMoney } from '../../common/money/money';
import { MoneyField } from '../../common/money/money.decorators';
import { CreatedRangeQueryDto } from '../../common/pagination/created-range.dto';
import { IsOmittable } from '../../common/validation/optional.decorator';
import type { PostingRow, VirtualAccountRow } from '../ledger.repository';

export const POSTING_TYPES = ['deposit', 'payment', 'transfer_out', 'transfer_in'] as const;
export type PostingType = (typeof POSTING_TYPES)[number];

export class DepositDto {
  @MoneyField()
  amount: string;

  @ApiPropertyOptional({ example: 'Top-up' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;

  @ApiPropertyOptional({ example: 'wire-2026-11-21-001', description: 'Reference of the money coming in.' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  external_reference?: string;
}

export class PayeeDto {
  @ApiProperty({ example: 'Companhia de Energia' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: '11222333000181', description: 'CPF or CNPJ.' })
  @IsOptional()
  @IsString()
  @MaxLength(30)
  document?: string;
}

export class PayDto {
  @MoneyField()
  amount: string;

  @ApiPropertyOptional({ example: 'Electricity bill' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;

  @ApiProperty({ type: PayeeDto })
  @IsDefined()
  @ValidateNested()
  @Type(() => PayeeDto)
  payee: PayeeDto;

  @ApiProperty({
    example: '83690000001234500000000000000000000000000000',
    description: 'Bill barcode or digitable line: 44 to 48 digits.',
  })
  @IsString()
  @Matches(/^\d{44,48}$/, { message: 'must be the 44 to 48 digits of a barcode or digitable line' })
  barcode: string;
}

export class BankAccountDto {
  @ApiProperty({ example: '341', description: 'Bank code (COMPE), 3 digits.' })
  @IsString()
  @Matches(/^\d{3}$/, { message: 'must be a 3-digit bank code' })
  bank: string;

  @ApiProperty({ example: '0001' })
  @IsString()
  @Matches(/^\d{1,5}$/, { message: 'must be 1 to 5 digits' })
  branch: string;

  @ApiProperty({ example: '12345-6' })
  @IsString()
  @Matches(/^\d{1,20}(-[0-9Xx])?$/, { message: 'must be the account number, with an optional check digit after "-"' })
  account: string;

  @ApiProperty({ example: '52998224725', description: "The holder's CPF or CNPJ." })
  @IsString()
  @MaxLength(30)
  document: string;
}

export class TransferDestinationDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Another virtual account of the platform (of any seller).' })
  @IsOmittable()
  @IsUUID('all', { message: 'must be the UUID of a virtual account' })
  virtual_account?: string;

  @ApiPropertyOptional({ example: 'ana@example.com', description: 'A PIX key: e-mail, phone, CPF/CNPJ or random key.' })
  @IsOmittable()
  @IsString()
  @IsNotEmpty()
  @MaxLength(77)
  pix_key?: string;

  @ApiPropertyOptional({ type: BankAccountDto })
  @IsOmittable()
  @ValidateNested()
  @Type(() => BankAccountDto)
  bank_account?: BankAccountDto;
}

export class TransferDto {
  @MoneyField()
  amount: string;

  @ApiPropertyOptional({ example: 'Supplier payment' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;

  @ApiProperty({ type: TransferDestinationDto, description: 'Exactly one of virtual_account, pix_key, bank_account.' })
  @IsDefined()
  @ValidateNested()
  @Type(() => TransferDestinationDto)
  destination: TransferDestinationDto;
}

export class PostingsQueryDto extends CreatedRangeQueryDto {
  @ApiPropertyOptional({ enum: POSTING_TYPES })
  @IsOptional()
  @IsIn(POSTING_TYPES, { message: `must be one of ${POSTING_TYPES.join(', ')}` })
  type?: PostingType;
}

export class VirtualAccountResponseDto {
  @ApiProperty({ format: 'uuid', description: 'Equals the id of its sub-account.' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: '1250.00' }) balance: string;
  @ApiProperty({ example: 'BRL' }) currency: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(account: VirtualAccountRow): VirtualAccountResponseDto {
    return {
      id: account.id,
      seller: account.sellerId,
      name: account.name,
      balance: formatMoney(account.balance),
      currency: account.currency,
      created_at: account.createdAt.toISOString(),
      updated_at: account.updatedAt.toISOString(),
    };
  }
}

export class PostingResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) virtual_account: string;
  @ApiProperty({ enum: POSTING_TYPES }) type: PostingType;
  @ApiProperty({ example: '50.00', description: 'Always positive; the type says the direction.' }) amount: string;
  @ApiProperty({ example: '1200.00' }) balance_after: string;
  @ApiProperty({ nullable: true, type: 'string' }) description: string | null;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: 'The other side of the movement.',
  })
  counterparty: Record<string, unknown> | null;
  @ApiProperty({ format: 'uuid', description: 'The double-entry journal entry this posting belongs to.' })
  journal_entry: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static of(line: PostingRow): PostingResponseDto {
    return {
      id: line.id,
      virtual_account: line.accountId,
      type: line.type as PostingType,
      amount: formatMoney(Math.abs(line.amount)),
      balance_after: formatMoney(line.balanceAfter),
      description: line.description,
      counterparty: line.counterparty,
      journal_entry: line.entryId,
      created_at: line.createdAt.toISOString(),
    };
  }
}
