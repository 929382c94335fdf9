import { HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { QueryFailedError } from 'typeorm';
import { ApiError, ErrorDetails, FieldErrors } from './api-error';
import { isBusyWithConcurrentUpdates, isDatabaseUnavailable } from './database-errors';

/** The error body of API.md section 1, the only shape any 4xx or 5xx answer has. */
export interface ErrorBody extends ErrorDetails {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  request_id: string;
  errors?: FieldErrors;
}

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
  /** True when the failure is the service's fault and the log must keep the cause. */
  unexpected: boolean;
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  411: 'length_required',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/** Fastify's request-parsing failures, by their error code. */
const FASTIFY_ERRORS: Record<string, { code: string; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'invalid_json', message: 'The request body is not valid JSON.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', message: 'The request body is larger than 1 MiB.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'unsupported_media_type',
    message: 'Unsupported Content-Type: send the body as application/json.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'invalid_content_length',
    message: 'The Content-Length header does not match the body.',
  },
};

export function toErrorResponse(error: unknown, requestId: string): ErrorResponse {
  const build = (
    status: number,
    code: string,
    message: string,
    extra: {
      errors?: FieldErrors;
      headers?: Record<string, string>;
      unexpected?: boolean;
      details?: ErrorDetails;
    } = {},
  ): ErrorResponse => ({
    status,
    headers: extra.headers ?? {},
    unexpected: extra.unexpected ?? false,
    body: {
      statusCode: status,
      error: STATUS_CODES[status] ?? 'Error',
      code,
      message,
      request_id: requestId,
      ...(extra.errors ? { errors: extra.errors } : {}),
      ...extra.details,
    },
  });

  if (error instanceof ApiError) {
    return build(error.status, error.code, error.message, {
      errors: error.errors,
      headers: error.headers,
      details: error.details,
    });
  }
  if (isDatabaseUnavailable(error)) {
    return build(503, 'service_unavailable', 'The database is unavailable. Try again shortly.', {
      headers: { 'retry-after': '5' },
    });
  }
  if (error instanceof QueryFailedError) {
    const code = (error.driverError as { code?: string } | undefined)?.code;
    if (isBusyWithConcurrentUpdates(error)) {
      return build(503, 'service_unavailable', 'The service is busy with concurrent updates. Try again.', {
        headers: { 'retry-after': '1' },
      });
    }
    // Class 22, data exception: a value the database cannot hold got past validation.
    if (code?.startsWith('22')) {
      return build(400, 'invalid_input', 'A value in the request cannot be stored (out of range or malformed).', {
        unexpected: true,
      });
    }
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    if (status < 500) {
      const fastifyCode = (error.cause as { code?: string } | undefined)?.code;
      const known = fastifyCode ? FASTIFY_ERRORS[fastifyCode] : undefined;
      if (known) return build(status, known.code, known.message);
      return build(status, CODE_BY_STATUS[status] ?? 'client_error', messageOf(error));
    }
  }
  return build(500, 'internal_error', 'An unexpected error occurred.', { unexpected: true });
}

function messageOf(error: HttpException): string {
  const response = error.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return error.message;
}
