import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsDateTime } from '../validation/date-time.decorator';
import { PageQueryDto } from './pagination';

/** A page of records created in a time range: `created_after` (inclusive), `created_before` (exclusive). */
export class CreatedRangeQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'Created at or after this instant.' })
  @IsOptional()
  @IsDateTime()
  created_after?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Created before this instant.' })
  @IsOptional()
  @IsDateTime()
  created_before?: string;
}
