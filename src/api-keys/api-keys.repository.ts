import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Repository } from 'typeorm';
import { applyKeyset, PageRequest } from '../common/pagination/pagination';
import { ApiKey } from './entities/api-key.entity';

export interface KeyIdentity {
  id: string;
  sellerId: string;
  active: boolean;
}

/** SQL of API keys; every read names the seller. Deleted keys stay as rows for the audit trail. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>) {}

  create(
    manager: EntityManager,
    input: Pick<ApiKey, 'sellerId' | 'keyHash' | 'keySuffix' | 'label' | 'description' | 'active'>,
  ): Promise<ApiKey> {
    const repo = manager.getRepository(ApiKey);
    return repo.save(repo.create(input));
  }

  findForSeller(sellerId: string, id: string): Promise<ApiKey | null> {
    return this.keys.findOneBy({ sellerId, id, deletedAt: IsNull() });
  }

  /** The key, locked until the end of the caller's transaction (so its change is audited against what it was). */
  lockForSeller(manager: EntityManager, sellerId: string, id: string): Promise<ApiKey | null> {
    return manager
      .getRepository(ApiKey)
      .findOne({ where: { sellerId, id, deletedAt: IsNull() }, lock: { mode: 'pessimistic_write' } });
  }

  listForSeller(sellerId: string, page: PageRequest): Promise<ApiKey[]> {
    const query = this.keys
      .createQueryBuilder('k')
      .where('k.seller_id = :sellerId AND k.deleted_at IS NULL', { sellerId });
    return applyKeyset(query, 'k.seq', page).getMany();
  }

  async update(
    manager: EntityManager,
    sellerId: string,
    id: string,
    changes: Partial<Pick<ApiKey, 'label' | 'description' | 'active'>>,
  ): Promise<void> {
    await manager.getRepository(ApiKey).update({ sellerId, id, deletedAt: IsNull() }, changes);
  }

  async softDelete(manager: EntityManager, sellerId: string, id: string): Promise<boolean> {
    const result = await manager
      .getRepository(ApiKey)
      .update({ sellerId, id, deletedAt: IsNull() }, { deletedAt: new Date(), active: false });
    return (result.affected ?? 0) > 0;
  }

  /**
   * The key with this hash, for authentication, in one round trip that also records its use
   * (at most once a minute, so that busy keys do not write on every request).
   */
  async authenticate(keyHash: string): Promise<KeyIdentity | null> {
    const rows: Array<{ id: string; seller_id: string; active: boolean }> = await this.keys.query(
      `WITH found AS (
         SELECT id, seller_id, active, last_used_at FROM api_keys WHERE key_hash = $1 AND deleted_at IS NULL
       ), touched AS (
         UPDATE api_keys SET last_used_at = now()
         WHERE id IN (SELECT id FROM found WHERE active AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute'))
       )
       SELECT id, seller_id, active FROM found`,
      [keyHash],
    );
    return rows[0] ? { id: rows[0].id, sellerId: rows[0].seller_id, active: rows[0].active } : null;
  }
}
