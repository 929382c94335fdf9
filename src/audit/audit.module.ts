import { Module } from '@nestjs/common';
import { AuditController } from './audit.controller';
import { AuditLogRepository } from './audit-log.repository';
import { AuditLogService } from './audit-log.service';

/**
 * The audit log's read side (`GET /audit/`, superusers). Writing is `recordAudit` (audit-log.ts),
 * called by each area inside the database transaction of the audited action.
 */
@Module({ controllers: [AuditController], providers: [AuditLogRepository, AuditLogService] })
export class AuditModule {}
