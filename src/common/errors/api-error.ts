/**
 * The typed exceptions of the service. Each carries the HTTP status, a stable snake_case
 * `code` and one human-readable `message`; the global filter turns them into the error body.
 */
export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldErrors,
    readonly headers: Record<string, string> = {},
    /** Fields of the error body beyond the standard ones that tell a client what to do next (ErrorBodyDto). */
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The error body's optional fields an error may fill (see ErrorBodyDto). */
export interface ErrorDetails {
  /** The record concerned, when the error names one (idempotency_secret_not_replayable). */
  id?: string;
  /** The ticket type short of seats (sold_out, not_enough_tickets when one is). */
  ticket_type?: string;
  /** The seats of that ticket type left (sold_out, not_enough_tickets). */
  available?: number;
}

export class BadRequestError extends ApiError {
  constructor(code: string, message: string) {
    super(400, code, message);
  }
}

/** The one error with `errors` (field path to messages): API.md gives them on validation failures only. */
export class ValidationError extends ApiError {
  constructor(errors: FieldErrors) {
    super(400, 'validation_failed', summarize(errors), errors);
  }

  /** A validation failure of a single field. */
  static of(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

export class UnauthorizedError extends ApiError {
  constructor(code = 'unauthorized', message = 'Authentication credentials were not provided or are invalid.') {
    super(401, code, message, undefined, { 'www-authenticate': 'Bearer' });
  }
}

export class ForbiddenError extends ApiError {
  constructor(code = 'forbidden', message = 'You do not have permission to perform this action.') {
    super(403, code, message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Not found.', code = 'not_found') {
    super(404, code, message);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(method: string, allowed: string[]) {
    super(405, 'method_not_allowed', `Method "${method}" not allowed.`, undefined, { allow: allowed.join(', ') });
  }
}

export class ConflictError extends ApiError {
  constructor(code: string, message: string, details: ErrorDetails = {}) {
    super(409, code, message, undefined, {}, details);
  }
}

/**
 * A replayed creation whose answer held a once-only secret (API key `key`, webhook `secret`):
 * the secret is never shown again; the body names the record created (`id`).
 */
export class SecretNotReplayableError extends ApiError {
  constructor(id: string) {
    super(
      409,
      'idempotency_secret_not_replayable',
      'This Idempotency-Key already created the record named by `id`; its secret is shown only once and cannot be replayed.',
      undefined,
      {},
      { id },
    );
  }
}

export class UnprocessableError extends ApiError {
  constructor(code: string, message: string) {
    super(422, code, message);
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(message = 'The service is temporarily unavailable. Try again shortly.') {
    super(503, 'service_unavailable', message, undefined, { 'retry-after': '5' });
  }
}

function summarize(errors: FieldErrors): string {
  const entries = Object.entries(errors);
  if (entries.length === 0) return 'The request is invalid.';
  const [field, messages] = entries[0];
  const more = entries.length > 1 ? ` (and ${entries.length - 1} more field${entries.length > 2 ? 's' : ''})` : '';
  return `Invalid request: ${field} ${messages[0]}${more}.`;
}
