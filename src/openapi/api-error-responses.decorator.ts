import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ERROR_DESCRIPTIONS } from './document-rules';
import { ErrorBodyDto } from './error-body.dto';

/** Documents the error answers of an operation, all with the standard error body. */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'Error.', type: ErrorBodyDto }),
    ),
  );
}
