import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy, type VerifyFunction } from 'passport-http-bearer';
import { ApiKeysService, hashApiKey } from '../../api-keys/api-keys.service';
import { UnauthorizedError } from '../../common/errors/api-error';
import { CredentialCache } from '../credential-cache';
import type { ApiKeyPrincipal } from '../principal';
import { API_KEY_SHAPE } from '../token-shape';

type BearerRequest = Parameters<Strategy<VerifyFunction>['authenticate']>[0];

/**
 * passport-http-bearer's strategy reading the Authorization header only. Left to itself it also
 * takes a token from an `access_token` field of the body or the query, and refuses a request
 * that carries one there besides the header: a client's own field of that name would turn its
 * valid key into a 401.
 */
class HeaderBearerStrategy extends Strategy<VerifyFunction> {
  override authenticate(request: BearerRequest, options?: object): void {
    super.authenticate({ headers: request.headers } as BearerRequest, options);
  }
}

/** A seller API key: a known, undeleted, active key acts as its seller. Other shapes are not API keys. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderBearerStrategy, 'api-key') {
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
