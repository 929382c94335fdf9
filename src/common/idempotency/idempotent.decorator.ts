import { SetMetadata, applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';

export const IDEMPOTENT = Symbol('idempotent');

/** Marks a POST that creates a record or moves money: it honours the `Idempotency-Key` header. */
export function Idempotent(): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT, true),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Up to 255 characters. Repeating a request with the same key within 24 hours replays the first ' +
        'response (header `Idempotent-Replayed: true`) instead of acting twice; a different body answers 422, ' +
        'a request still running 409.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    }),
  );
}
