import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators';
import { Page, PageOf, toPageRequest } from '../common/pagination/pagination';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { AuditLogService } from './audit-log.service';
import { AuditEntryResponseDto, AuditLogQueryDto } from './dto/audit-entry.dto';
import { instantOf } from '../common/validation/date-time.decorator';

@ApiTags('audit log')
@Controller('audit')
export class AuditController {
  constructor(private readonly log: AuditLogService) {}

  @Get()
  @Authenticated({ superuser: true })
  @ApiOperation({
    summary: 'The audit log, newest first (superusers)',
    description:
      'Who did what, when, from where: user activation and superuser changes, access grants and revocations, API key creation and deletion, seller commercial terms, voids, split rules. Filters `actor`, `seller`, `action`, `created_after`.',
  })
  @ApiOkResponse({ type: PageOf(AuditEntryResponseDto) })
  @ApiErrorResponses(400)
  list(@Query() query: AuditLogQueryDto): Promise<Page<AuditEntryResponseDto>> {
    return this.log.list(
      {
        actorId: query.actor,
        sellerId: query.seller,
        action: query.action,
        createdAfter: query.created_after ? instantOf(query.created_after) : undefined,
      },
      toPageRequest(query),
    );
  }
}
