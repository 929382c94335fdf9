import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CredentialCache } from '../auth/credential-cache';
import type { FieldErrors } from '../common/errors/api-error';
import { readFeeTable } from '../split/fee-table';
import { addError, isPlainObject } from '../split/table';
import { PlansRepository, RatePlanImport } from './plans.repository';
import { UNPRINTABLE } from '../common/validation/one-line.decorator';

export interface SyncSummary {
  total: number;
  created: number;
  updated: number;
  unchanged: number;
}

export class SyncFileError extends Error {
  constructor(readonly problems: FieldErrors) {
    super(`The file was refused: ${Object.keys(problems).length} problem(s); nothing was written.`);
    this.name = 'SyncFileError';
  }
}

const FIELDS = ['external_id', 'name', 'description', 'active', 'fees'];

/**
 * The synchronisation routine of rate plans (API.md section 6): the export of the central fee
 * service, a JSON array of plans, upserted by external_id in one transaction. The whole file
 * is validated first and refused with the path of every problem.
 */
@Injectable()
export class RatePlansSyncService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly plans: PlansRepository,
    private readonly credentials: CredentialCache,
  ) {}

  validate(document: unknown): RatePlanImport[] {
    const problems: FieldErrors = {};
    if (!Array.isArray(document)) {
      addError(problems, '$', 'must be a JSON array of rate plans');
      throw new SyncFileError(problems);
    }
    const seen = new Map<string, number>();
    document.forEach((item, index) => {
      const at = `[${index}]`;
      if (!isPlainObject(item)) {
        addError(problems, at, 'must be an object');
        return;
      }
      for (const key of Object.keys(item))
        if (!FIELDS.includes(key)) addError(problems, `${at}.${key}`, 'unknown field');
      if (typeof item.external_id !== 'string' || item.external_id.trim() === '' || item.external_id.length > 200) {
        addError(problems, `${at}.external_id`, 'must be a non-empty string of at most 200 characters');
      } else if (seen.has(item.external_id)) {
        addError(problems, `${at}.external_id`, `repeats the external_id of [${seen.get(item.external_id)}]`);
      } else {
        seen.set(item.external_id, index);
      }
      if (typeof item.name !== 'string' || item.name.trim() === '' || item.name.length > 200) {
        addError(problems, `${at}.name`, 'must be a non-empty string of at most 200 characters');
      } else if (UNPRINTABLE.test(item.name)) {
        // Shown on one line wherever plans are listed, as the API's other names are.
        addError(problems, `${at}.name`, 'must be one line of text, without control characters');
      }
      if (item.description !== undefined && typeof item.description !== 'string')
        addError(problems, `${at}.description`, 'must be a string');
      if (item.active !== undefined && typeof item.active !== 'boolean')
        addError(problems, `${at}.active`, 'must be true or false');
      readFeeTable(item.fees, `${at}.fees`, problems);
    });
    if (Object.keys(problems).length > 0) throw new SyncFileError(problems);
    return document.map((item: Record<string, unknown>) => ({
      external_id: item.external_id as string,
      name: (item.name as string).trim(),
      description: (item.description as string | undefined) ?? null,
      active: (item.active as boolean | undefined) ?? null,
      fees: item.fees as Record<string, unknown>,
    }));
  }

  /** Validates, then upserts everything in one transaction; `onProgress` after each plan. */
  async sync(document: unknown, onProgress: (done: number) => void = () => undefined): Promise<SyncSummary> {
    const plans = this.validate(document);
    const summary: SyncSummary = { total: plans.length, created: 0, updated: 0, unchanged: 0 };
    await this.dataSource.transaction(async (manager) => {
      for (let i = 0; i < plans.length; i++) {
        summary[await this.plans.upsertRatePlan(manager, plans[i])] += 1;
        onProgress(i + 1);
      }
    });
    if (summary.updated > 0) this.credentials.ratePlansChanged();
    return summary;
  }
}
