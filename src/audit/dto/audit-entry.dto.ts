import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/pagination';
import { IsDateTime } from '../../common/validation/date-time.decorator';
import type { AuditLogRow } from '../audit-log.repository';

export class AuditLogQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only actions by this user or API key.' })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  actor?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Only actions on this seller.' })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  seller?: string;

  @ApiPropertyOptional({ example: 'access.granted', description: 'Only this action.' })
  @IsOptional()
  @MaxLength(100)
  @Matches(/^[a-z_]+(\.[a-z_]+)+$/, { message: 'must be an action name such as access.granted' })
  action?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Written at or after this instant.' })
  @IsOptional()
  @IsDateTime()
  created_after?: string;
}

export class AuditActorDto {
  @ApiProperty({ enum: ['user', 'api_key', 'system'] }) kind: 'user' | 'api_key' | 'system';
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string', description: 'Null for the system.' })
  id: string | null;
}

export class AuditTargetDto {
  @ApiProperty({ example: 'access' }) type: string;
  @ApiProperty({ format: 'uuid' }) id: string;
}

export class AuditEntryResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: AuditActorDto }) actor: AuditActorDto;
  @ApiProperty({ example: 'access.granted' }) action: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: 'string' }) seller: string | null;
  @ApiProperty({ type: AuditTargetDto }) target: AuditTargetDto;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { permissions: { from: ['transactions.view'], to: ['transactions.view', 'transactions.void'] } },
    description: 'What changed (`{field: {from, to}}` or the values set); never secrets.',
  })
  changes: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: 'string' }) request_id: string | null;
  @ApiProperty({ nullable: true, type: 'string', description: 'The client address.' }) ip: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static of(row: AuditLogRow): AuditEntryResponseDto {
    return {
      id: row.id,
      actor: { kind: row.actor_kind, id: row.actor_id },
      action: row.action,
      seller: row.seller_id,
      target: { type: row.target_type, id: row.target_id },
      changes: row.changes,
      request_id: row.request_id,
      ip: row.ip,
      created_at: row.created_at.toISOString(),
    };
  }
}
