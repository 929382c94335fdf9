import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from './error-body.dto';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (`validation_failed` with `errors`, `invalid_json`, or a rule of the operation).',
  401: 'No credential, or an invalid, expired or inactive one (`WWW-Authenticate: Bearer`).',
  403: 'A valid credential without the right to this operation.',
  404: 'No such record, or one the caller cannot see.',
  405: 'The path exists but does not serve this method (`Allow` lists those it does).',
  409: 'The record is in a state that forbids the operation, or an Idempotency-Key is still in use.',
  413: 'The request body is larger than 1 MiB.',
  422: 'The Idempotency-Key was already used with a different body.',
  429: 'Too many requests (`Retry-After` says when to try again).',
  503: 'The database is unavailable; retry later.',
};

/** Documents the error answers of an operation, all with the standard error body. */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error.', type: ErrorBodyDto }),
    ),
  );
}
