import { LoggerService } from '@nestjs/common';
import pino, { DestinationStream, Logger } from 'pino';
import { requestLogFields } from '../context/request-context';

/**
 * Paths removed from every log line: credentials, secrets and card data never reach a log.
 * `*.x` covers the field at any first level of a logged object (`body.password`, `err.card`).
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'headers.authorization',
  'authorization',
  'password',
  'new_password',
  'token',
  'access',
  'refresh',
  'key',
  'secret',
  'card',
  'cvv',
  'card_number',
  '*.authorization',
  '*.password',
  '*.new_password',
  '*.token',
  '*.access',
  '*.refresh',
  '*.key',
  '*.secret',
  '*.card',
  '*.cvv',
  '*.card_number',
  '*.*.password',
  '*.*.token',
  '*.*.key',
  '*.*.secret',
  '*.*.card',
  '*.*.cvv',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'payments-api' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      serializers: { err: serializeError },
      // Lines written while serving a request carry its id, credential and seller (Fastify's
      // request logger is this logger itself: see createFastifyAdapter).
      mixin: () => requestLogFields(),
    },
    destination,
  );
}

/**
 * Errors as pino writes them, minus what a failed SQL statement carries: its text and bound
 * parameters may hold password hashes, one-time codes or personal data.
 */
function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const key of ['parameters', 'query', 'driverError', 'detail', 'where']) delete serialized[key];
  return serialized;
}

/**
 * Nest's logger interface over the same pino instance, so framework messages are JSON too.
 * Nest calls `method(message, ...params, context)`; an object message is merged into the line
 * and a string parameter before the context becomes the text (`logger.error({ err }, 'text')`).
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]) {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]) {
    this.write('fatal', message, params);
  }

  private write(level: pino.Level, message: unknown, params: unknown[]) {
    const strings = params.filter((p): p is string => typeof p === 'string');
    const context = strings.length > 0 ? strings[strings.length - 1] : undefined;
    const text = strings.length > 1 ? strings[0] : undefined;
    if (message instanceof Error) {
      this.logger[level]({ context, err: message }, text ?? message.message);
    } else if (message !== null && typeof message === 'object') {
      this.logger[level]({ context, ...(message as object) }, text);
    } else {
      this.logger[level]({ context, ...(text ? { detail: text } : {}) }, String(message));
    }
  }
}
