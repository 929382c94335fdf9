import { Injectable } from '@nestjs/common';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { AuditLogFilter, AuditLogRepository } from './audit-log.repository';
import { AuditEntryResponseDto } from './dto/audit-entry.dto';

/** Reading the audit log (writing is `recordAudit`, in each audited action's transaction). */
@Injectable()
export class AuditLogService {
  constructor(private readonly log: AuditLogRepository) {}

  async list(filter: AuditLogFilter, page: PageRequest): Promise<Page<AuditEntryResponseDto>> {
    return toPage(await this.log.list(filter, page), page, (r) => r.seq, AuditEntryResponseDto.of);
  }
}
