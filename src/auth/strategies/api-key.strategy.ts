import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import { ApiKeysService, hashApiKey } from '../../api-keys/api-keys.service';
import { UnauthorizedError } from '../../common/errors/api-error';
import { CredentialCache } from '../credential-cache';
import type { ApiKeyPrincipal } from '../principal';
import { API_KEY_SHAPE } from '../token-shape';

/** A seller API key: a known, undeleted, active key acts as its seller. Other shapes are not API keys. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(Strategy, 'api-key') {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly cache: CredentialCache,
  ) {
    super();
  }

  async validate(secret: string): Promise<ApiKeyPrincipal | null> {
    if (!API_KEY_SHAPE.test(secret)) return null;
    const key = await this.cache.apiKey(hashApiKey(secret), () => this.keys.authenticate(secret));
    if (!key) throw new UnauthorizedError('invalid_api_key', 'The API key is not valid.');
    if (!key.active) throw new UnauthorizedError('api_key_inactive', 'The API key is inactive.');
    return { kind: 'api_key', id: key.id, sellerId: key.sellerId, credentialId: `api_key:${key.id}` };
  }
}
