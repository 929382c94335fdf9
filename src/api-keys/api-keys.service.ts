import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../common/errors/api-error';
import { requestTransaction } from '../common/idempotency/request-transaction';
import { Page, PageRequest, toPage } from '../common/pagination/pagination';
import { ApiKeysRepository, KeyIdentity } from './api-keys.repository';
import { ApiKeyResponseDto, CreateApiKeyDto, CreatedApiKeyResponseDto, UpdateApiKeyDto } from './dto/api-key.dto';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key.toLowerCase()).digest('hex');
}

/** Seller API keys (spec 2.2, 3, 4.1): a UUID4 secret shown once, stored as its SHA-256. */
@Injectable()
export class ApiKeysService {
  constructor(
    @Inject(ApiKeysRepository) private readonly keys: ApiKeysRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  create(sellerId: string, input: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    const secret = randomUUID();
    return requestTransaction(this.dataSource, async (manager) => {
      const key = await this.keys.create(
        {
          sellerId,
          keyHash: hashApiKey(secret),
          keySuffix: secret.slice(-4),
          label: input.label,
          description: input.description,
          active: input.active ?? true,
        },
        manager,
      );
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
    return ApiKeyResponseDto.of(await this.find(sellerId, id));
  }

  async update(sellerId: string, id: string, changes: UpdateApiKeyDto): Promise<ApiKeyResponseDto> {
    await this.find(sellerId, id);
    await this.keys.update(sellerId, id, changes);
    return this.get(sellerId, id);
  }

  async remove(sellerId: string, id: string): Promise<void> {
    if (!(await this.keys.softDelete(sellerId, id))) throw notFound();
  }

  /** The key behind a presented secret, active or not; null when unknown or deleted. */
  authenticate(secret: string): Promise<KeyIdentity | null> {
    return this.keys.authenticate(hashApiKey(secret));
  }

  private async find(sellerId: string, id: string) {
    const key = await this.keys.findForSeller(sellerId, id);
    if (!key) throw notFound();
    return key;
  }
}

function notFound(): NotFoundError {
  return new NotFoundError('API key not found.', 'api_key_not_found');
}
