import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { recordAudit } from '../audit/audit-log';
import { changedFields } from '../audit/changes';
import { CredentialCache } from '../auth/credential-cache';
import { NotFoundError } from '../common/errors/api-error';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { ApiKeysRepository, KeyIdentity } from './api-keys.repository';
import { ApiKeyResponseDto, CreateApiKeyDto, CreatedApiKeyResponseDto, UpdateApiKeyDto } from './dto/api-key.dto';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex');
}

/**
 * Seller API keys (spec 2.2, 3, 4.1): a UUID4 secret shown once, stored as its SHA-256.
 * Creating, changing and deleting a key is written to the audit log in the same transaction.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly keys: ApiKeysRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly credentials: CredentialCache,
  ) {}

  create(sellerId: string, input: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    const secret = randomUUID();
    return requestTransaction(this.dataSource, async (manager) => {
      const key = await this.keys.create(manager, {
        sellerId,
        keyHash: hashApiKey(secret),
        keySuffix: secret.slice(-4),
        label: input.label,
        description: input.description,
        active: input.active ?? true,
      });
      await recordAudit(manager, {
        action: 'api_key.created',
        sellerId,
        target: { type: 'api_key', id: key.id },
        changes: { label: key.label, active: key.active, key_suffix: key.keySuffix },
      });
      return {
        id: key.id,
        key: secret,
        active: key.active,
        label: key.label,
        description: key.description,
        created_at: key.createdAt.toISOString(),
      };
    });
  }

  async list(sellerId: string, page: PageRequest): Promise<Page<ApiKeyResponseDto>> {
    return toPage(await this.keys.listForSeller(sellerId, page), page, (k) => k.seq, ApiKeyResponseDto.of);
  }

  async get(sellerId: string, id: string): Promise<ApiKeyResponseDto> {
    const key = await this.keys.findForSeller(sellerId, id);
    if (!key) throw notFound();
    return ApiKeyResponseDto.of(key);
  }

  async update(sellerId: string, id: string, changes: UpdateApiKeyDto): Promise<ApiKeyResponseDto> {
    await this.dataSource.transaction(async (manager) => {
      const key = await this.keys.lockForSeller(manager, sellerId, id);
      if (!key) throw notFound();
      const changed = changedFields(
        { label: key.label, description: key.description, active: key.active },
        { label: changes.label, description: changes.description, active: changes.active },
      );
      // Nothing written (nor `updated_at` moved) when nothing differs.
      if (Object.keys(changed).length > 0) {
        await this.keys.update(manager, sellerId, id, changes);
        await recordAudit(manager, {
          action: 'api_key.changed',
          sellerId,
          target: { type: 'api_key', id },
          changes: changed,
        });
      }
    });
    this.credentials.apiKeyChanged(id);
    return this.get(sellerId, id);
  }

  async remove(sellerId: string, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (!(await this.keys.softDelete(manager, sellerId, id))) throw notFound();
      await recordAudit(manager, { action: 'api_key.deleted', sellerId, target: { type: 'api_key', id } });
    });
    this.credentials.apiKeyChanged(id);
  }

  /** The key behind a presented secret, active or not; null when unknown or deleted. */
  authenticate(secret: string): Promise<KeyIdentity | null> {
    return this.keys.authenticate(hashApiKey(secret));
  }
}

function notFound(): NotFoundError {
  return new NotFoundError('API key not found.', 'api_key_not_found');
}
