import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsString, MaxLength } from 'class-validator';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import type { ApiKey } from '../entities/api-key.entity';
import { IsOneLine } from '../../common/validation/one-line.decorator';

export class CreateApiKeyDto {
  @ApiProperty({ example: 'ERP integration', description: 'Required, non-empty.' })
  @IsString()
  @IsNotBlank()
  @MaxLength(100)
  @IsOneLine()
  label: string;

  @ApiProperty({
    example: 'Key used by our ERP to read transactions.',
    description: 'Required; null is rejected; "" is allowed.',
  })
  @IsDefined({ message: 'is required (use "" for none)' })
  @IsString()
  @MaxLength(1000)
  description: string;

  @ApiPropertyOptional({ default: true, description: 'An inactive key exists but is rejected at authentication.' })
  @IsOmittable()
  @IsBoolean()
  active?: boolean;
}

export class UpdateApiKeyDto {
  @ApiPropertyOptional()
  @IsOmittable()
  @IsString()
  @IsNotBlank()
  @MaxLength(100)
  @IsOneLine()
  label?: string;

  @ApiPropertyOptional({ description: 'null is rejected; "" is allowed.' })
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @ApiPropertyOptional()
  @IsOmittable()
  @IsBoolean()
  active?: boolean;
}

export class ApiKeyResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty() label: string;
  @ApiProperty() description: string;
  @ApiProperty() active: boolean;
  @ApiProperty({ example: '9f3c', description: 'Last 4 characters of the key.' }) key_suffix: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: 'string' }) last_used_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(key: ApiKey): ApiKeyResponseDto {
    return {
      id: key.id,
      seller: key.sellerId,
      label: key.label,
      description: key.description,
      active: key.active,
      key_suffix: key.keySuffix,
      last_used_at: key.lastUsedAt?.toISOString() ?? null,
      created_at: key.createdAt.toISOString(),
      updated_at: key.updatedAt.toISOString(),
    };
  }
}

export class CreatedApiKeyResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The secret (UUID4). Shown only in this response; store it now.' })
  key: string;
  @ApiProperty() active: boolean;
  @ApiProperty() label: string;
  @ApiProperty() description: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}
