import { ApiProperty } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import type { Subaccount } from '../entities/subaccount.entity';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';

export class CreateSubaccountDto {
  @ApiProperty({ example: 'Filial Centro' })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;
}

export class SubaccountResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'uuid', description: 'Its virtual account, opened with it (same id).' })
  virtual_account: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static of(sub: Subaccount): SubaccountResponseDto {
    return {
      id: sub.id,
      seller: sub.sellerId,
      name: sub.name,
      virtual_account: sub.id,
      created_at: sub.createdAt.toISOString(),
    };
  }
}
