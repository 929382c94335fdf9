import { SetMetadata, UseInterceptors, applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { IdempotencyInterceptor } from './idempotency.interceptor';

export const IDEMPOTENT = Symbol('idempotent');

export interface IdempotentOptions {
  /**
   * The success answer holds a once-only secret (API key `key`, webhook `secret`): only the
   * record's `id` is stored, and a replay answers 409 `idempotency_secret_not_replayable` with it.
   */
  secret?: boolean;
}

/**
 * Marks a POST that creates a record or moves money: it honours the `Idempotency-Key` header.
 * Its service should write the change with `requestTransaction` (request-transaction.ts), so the
 * answer is recorded in the change's own database transaction.
 */
export function Idempotent(options: IdempotentOptions = {}): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT, options),
    // Bound here, not globally: a route with no interceptor skips Nest's interceptor chain (rxjs).
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Up to 255 characters without control characters, sent once (a repeated header answers 400 ' +
        '`invalid_idempotency_key`), scoped to the caller (user, API key seller, or client address for public routes). ' +
        'Repeating the same request (method, route, record, body) with the same key within 24 hours replays the ' +
        'first response (header `Idempotent-Replayed: true`) instead of acting twice, to a caller that still has the ' +
        'access and permissions the first request needed (else the refusal it would get now); the key with another ' +
        'request answers 422 `idempotency_key_reused`, while the first still runs 409 `idempotency_key_in_use` ' +
        '(a body of `{}` is the same request as no body). A request refused as invalid (400 `validation_failed`) or ' +
        'failed by the server (5xx) does not use the key up, and a request that died without committing frees it ' +
        'after 60 s.' +
        (options.secret
          ? ' A replay never shows the secret again: it answers 409 `idempotency_secret_not_replayable` with `id`.'
          : ''),
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    }),
  );
}
