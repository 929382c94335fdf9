import { IsPixKey } from '../pix-key';
import { DUE_DATE_DESCRIPTION } from '../../transactions/processor/payment-processor';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { formatMoney } from '../../common/money/money';
import { MoneyField } from '../../common/money/money.decorators';
import { CreatedRangeQueryDto } from '../../common/pagination/created-range.dto';
import { PageQueryDto } from '../../common/pagination/pagination';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { NestedObject } from '../../common/validation/nested.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import type { DepositRow, DepositStatus } from '../deposits.repository';
import type { PostingRow, PostingStatus, VirtualAccountRow } from '../ledger.repository';
import { IsOneLine } from '../../common/validation/one-line.decorator';
import { CpfOrCnpj } from '../../sellers/document';

export const POSTING_TYPES = ['deposit', 'payment', 'transfer_out', 'transfer_in', 'reversal'] as const;
export type PostingType = (typeof POSTING_TYPES)[number];
export const POSTING_STATUSES = ['processing', 'completed', 'failed'] as const;
export const DEPOSIT_METHODS = ['pix', 'boleto', 'manual'] as const;
export const DEPOSIT_STATUSES = ['pending', 'completed', 'expired'] as const;

export class DepositDto {
  @MoneyField()
  amount: string;

  @ApiPropertyOptional({ example: 'Top-up' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  description?: string;

  @ApiPropertyOptional({
    enum: DEPOSIT_METHODS,
    default: 'pix',
    description:
      'How the money comes in: `pix` (a PIX charge) or `boleto`, pending until paid; `manual` (superusers only, ' +
      'with `reason`) posts at once and is written to the audit log.',
  })
  @IsOptional()
  @IsIn(DEPOSIT_METHODS, { message: `must be one of ${DEPOSIT_METHODS.join(', ')}` })
  method?: (typeof DEPOSIT_METHODS)[number];

  @ApiPropertyOptional({
    example: 'Wire 2026-11-21 reconciled with the bank statement',
    description: 'Why money is credited by hand: required for, and only for, a manual deposit.',
  })
  @ValidateIf((o: DepositDto) => o.method === 'manual' || o.reason !== undefined)
  @ValidateBy({
    name: 'onlyForManual',
    validator: {
      validate: (_value, args) => (args?.object as DepositDto).method === 'manual',
      defaultMessage: () => 'is only for manual deposits',
    },
  })
  @IsString({ message: 'is required for a manual deposit and must be a string' })
  @IsNotBlank({ message: 'is required for a manual deposit' })
  @MaxLength(500)
  reason?: string;

  @ApiPropertyOptional({ example: 'wire-2026-11-21-001', description: 'Reference of the money coming in.' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  external_reference?: string;
}

export class DepositsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DEPOSIT_STATUSES })
  @IsOptional()
  @IsIn(DEPOSIT_STATUSES, { message: `must be one of ${DEPOSIT_STATUSES.join(', ')}` })
  status?: DepositStatus;
}

export class PayeeDto {
  @ApiProperty({ example: 'Companhia de Energia' })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;

  @ApiPropertyOptional({ example: '11222333000181', description: 'CPF or CNPJ.' })
  @IsOptional()
  @IsString()
  @MaxLength(30)
  @CpfOrCnpj()
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
  @NestedObject(() => PayeeDto)
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
  @CpfOrCnpj()
  document: string;
}

export class TransferDestinationDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Another virtual account of the platform (of any seller).' })
  @IsOmittable()
  @IsUUID('all', { message: 'must be the UUID of a virtual account' })
  virtual_account?: string;

  @ApiPropertyOptional({
    example: 'ana@example.com',
    maxLength: 77,
    description:
      'A PIX key: a CPF or CNPJ (digits only, valid check digits), an e-mail (up to 77 characters), a phone number (`+55` and 10 or 11 digits) or a random key (UUID).',
  })
  @IsOmittable()
  @IsString()
  @IsPixKey()
  pix_key?: string;

  @ApiPropertyOptional({ type: BankAccountDto })
  @IsOmittable()
  @NestedObject(() => BankAccountDto)
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
  @NestedObject(() => TransferDestinationDto)
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
  @ApiProperty({
    enum: POSTING_STATUSES,
    description:
      'Money leaving the platform (`payment`, `transfer_out` to a PIX key or bank account) is `processing` until ' +
      'the payout completes or fails; a failed one is given back by a `reversal` posting. Others are `completed`.',
  })
  status: PostingStatus;
  @ApiProperty({ nullable: true, type: 'string', example: null, description: 'Why the payout failed.' })
  failure_reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  /** Also built in SQL for the posting events a movement writes: POST_MOVEMENT (ledger.repository.ts) must agree. */
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
      status: line.status,
      failure_reason: line.failureReason,
      created_at: line.createdAt.toISOString(),
    };
  }
}

export class PixInstructionsDto {
  @ApiProperty({ description: 'PIX "copia e cola" payload (EMV).' }) qr_code: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

export class BoletoInstructionsDto {
  @ApiProperty({ example: '34191790010104351004791020150008291070026000' }) digitable_line: string;
  @ApiProperty({
    format: 'date',
    example: '2026-11-24',
    description: DUE_DATE_DESCRIPTION,
  })
  due_date: string;
}

export class DepositResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) virtual_account: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty({
    enum: DEPOSIT_STATUSES,
    description: '`pending` until paid in, then `completed` with its posting; unpaid ones become `expired`.',
  })
  status: DepositStatus;
  @ApiProperty({ example: '150.00' }) amount: string;
  @ApiProperty({ enum: DEPOSIT_METHODS }) method: (typeof DEPOSIT_METHODS)[number];
  @ApiProperty({ nullable: true, type: 'string' }) description: string | null;
  @ApiProperty({ nullable: true, type: 'string', description: 'Why a manual deposit was made.' })
  reason: string | null;
  @ApiProperty({ nullable: true, type: 'string' }) external_reference: string | null;
  @ApiProperty({ type: PixInstructionsDto, nullable: true, description: 'How to pay a pix deposit.' })
  pix: PixInstructionsDto | null;
  @ApiProperty({ type: BoletoInstructionsDto, nullable: true, description: 'How to pay a boleto deposit.' })
  boleto: BoletoInstructionsDto | null;
  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: 'string',
    description: "The deposit's posting on the virtual account (in its statement), once completed.",
  })
  posting: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) expires_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) completed_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) expired_at: string | null;

  static of(deposit: DepositRow): DepositResponseDto {
    return {
      id: deposit.id,
      virtual_account: deposit.accountId,
      seller: deposit.sellerId,
      status: deposit.status,
      amount: formatMoney(deposit.amount),
      method: deposit.method,
      description: deposit.description,
      reason: deposit.reason,
      external_reference: deposit.externalReference,
      pix: deposit.pix,
      boleto: deposit.boleto,
      posting: deposit.postingId,
      expires_at: deposit.expiresAt?.toISOString() ?? null,
      created_at: deposit.createdAt.toISOString(),
      updated_at: deposit.updatedAt.toISOString(),
      completed_at: deposit.completedAt?.toISOString() ?? null,
      expired_at: deposit.expiredAt?.toISOString() ?? null,
    };
  }
}
