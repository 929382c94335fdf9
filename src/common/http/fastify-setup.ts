import { FastifyAdapter } from '@nestjs/platform-fastify';
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import secureJson from 'secure-json-parse';
import { ApiError, MethodNotAllowedError, NotFoundError, ValidationError } from '../errors/api-error';
import { toErrorResponse } from '../errors/error-response';
import { refuseUnsafeFields } from '../validation/validation.pipe';
import type { HttpMetrics } from '../../metrics/http-metrics';
import { requestLogFieldsOf, runInRequestContext } from '../context/request-context';
import type { RequestDrain } from './drain';
import { MAX_JSON_DEPTH, STRING_PROBLEM_MESSAGES, findBadString, jsonNestedDeeperThan } from './input-guard';
import type { FastJsonSerializers } from './fast-json';

export const BODY_LIMIT_BYTES = 1024 * 1024;
/**
 * A client's X-Request-Id that is kept: visible ASCII as tracing ids are, but for `"` and `\`
 * (a log line escapes them, and an id should be found in the logs as sent).
 */
const REQUEST_ID = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/;
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The Fastify side of the HTTP contract (API.md section 1), set up before Nest registers
 * its routes: request ids, one JSON parser, 405 for known paths, one log line and the
 * metrics of every request.
 */
export function createFastifyAdapter(options: {
  logger: Logger;
  metrics: HttpMetrics;
  drain: RequestDrain;
  trustProxy: boolean | string[];
  fastJson: FastJsonSerializers;
}): FastifyAdapter {
  const { logger, metrics } = options;
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    // One line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    // No child logger per request: with redaction on, pino redacts a child's bindings as it makes
    // it, a cost every request paid. A request's lines get its request_id (and credential and
    // seller) from the logger's mixin instead (createLogger), or from the line itself (below).
    childLoggerFactory: (rootLogger: FastifyBaseLogger) => rootLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    exposeHeadRoutes: true,
    requestIdHeader: false,
    genReqId: requestIdOf,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    trustProxy: options.trustProxy,
    // While stopping, requests go through the hooks: RequestDrain answers them with the error body.
    return503OnClosing: false,
    // The router refuses a path that is not percent-encoded UTF-8 (or an over-long parameter)
    // before any hook runs: answer those with the error body too.
    frameworkErrors: (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
      const response = toErrorResponse(routerError(error, request, routes), String(request.id));
      reply.header('x-request-id', request.id).status(response.status).headers(response.headers).send(response.body);
    },
    clientErrorHandler: answerClientError,
  });
  const fastify = adapter.getInstance() as unknown as FastifyInstance;
  const routes = recordRoutes(fastify);
  options.drain.install(fastify);
  options.fastJson.hook(fastify);

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, parseJson);

  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // A `%` that starts no escape (`/sellers/%ZZ/`): the router passes it on as text; it is no URL.
    if (MALFORMED_ESCAPE.test(pathOf(request.url))) {
      const response = toErrorResponse(routerError({ code: 'FST_ERR_BAD_URL' }, request, routes), String(request.id));
      return reply.status(response.status).headers(response.headers).send(response.body);
    }
    // A route with parameters may be shadowed by a more specific path that does not serve this method.
    if (!request.is404 && !routes.mayBeShadowed(request.routeOptions.url ?? '')) return;
    // No route for this method: 405 when the path serves others, else 404; before any authentication.
    const allowed = routes.allowedMethods(request.url);
    if (!request.is404 && allowed.includes(request.method)) return;
    const error = allowed.length > 0 ? new MethodNotAllowedError(request.method, allowed) : noRoute(request);
    const response = toErrorResponse(error, String(request.id));
    return reply.status(response.status).headers(response.headers).send(response.body);
  });

  // PostgreSQL text cannot hold NUL characters, and ill-formed UTF-16 (a lone surrogate from a
  // JSON `\ud800` escape) breaks validators and encoders: refuse both up front, with the path.
  fastify.addHook('preValidation', async (request, reply) => {
    const found =
      findBadString(request.params, 'path') ?? findBadString(request.query, 'query') ?? findBadString(request.body, '');
    if (found === null) return;
    const response = toErrorResponse(
      ValidationError.of(found.path || 'body', STRING_PROBLEM_MESSAGES[found.problem]),
      String(request.id),
    );
    return reply.status(response.status).headers(response.headers).send(response.body);
  });

  // Everything after the body is parsed (guards, interceptors, handlers) runs in the request's context.
  fastify.addHook('preHandler', (request, _reply, done) => {
    runInRequestContext({ requestId: String(request.id), ip: request.ip, request }, done);
  });

  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    const seconds = reply.elapsedTime / 1000;
    metrics.observe(request.method, route, reply.statusCode, seconds);
    if (!(request.log as Logger).isLevelEnabled('info')) return; // the line would be dropped: do not build it
    request.log.info(
      {
        request_id: String(request.id),
        ...requestLogFieldsOf(request),
        http: { method: request.method, path: pathOf(request.url), route, status: reply.statusCode },
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request completed',
    );
  });
  return adapter;
}

function routerError(
  error: { code?: string },
  request: FastifyRequest,
  routes: ReturnType<typeof recordRoutes>,
): unknown {
  const badUrl = error.code === 'FST_ERR_BAD_URL';
  if (!badUrl && error.code !== 'FST_ERR_MAX_PARAM_LENGTH') return error;
  // The router gives up on the encoding, or on a parameter's length (while walking the method's
  // routes, deeper ones included), before it knows whether a route matches: a path that no route
  // would match is unknown (404), or served by other methods (405), whatever its spelling.
  const allowed = routes.allowedMethods(badUrl ? request.url.replace(/%([0-9a-fA-F]{2})?/g, '_') : request.url);
  if (!allowed.includes(request.method)) {
    return allowed.length > 0 ? new MethodNotAllowedError(request.method, allowed) : noRoute(request);
  }
  return badUrl
    ? new ApiError(400, 'invalid_url', 'The request path is not valid percent-encoded UTF-8.')
    : new ApiError(414, 'uri_too_long', 'A path parameter is longer than the service accepts.');
}

/**
 * What Node's HTTP parser refuses before any request exists (a header with a control character,
 * headers over the size limit, a request that took too long to arrive): answered with the error
 * body and an X-Request-Id like every other answer, then the connection is closed.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // A response of an earlier request on this connection has begun: writing now would land in its
  // body (as Node's own handler, only the connection is closed then).
  if ((socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    socket.destroy(error);
    return;
  }
  const refusal =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ApiError(408, 'request_timeout', 'The request did not arrive in time.')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? overlongRequestLine((error as { rawPacket?: Buffer }).rawPacket)
          ? new ApiError(414, 'uri_too_long', 'The request URL is longer than the service accepts.')
          : new ApiError(431, 'headers_too_large', 'The request headers are too large.')
        : new ApiError(400, 'malformed_request', `The request is not valid HTTP: ${malformation(error.code)}.`);
  const requestId = randomUUID();
  const { status, body } = toErrorResponse(refusal, requestId);
  const json = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${json}`,
    );
  }
  socket.destroy(error);
}

/** What llhttp found wrong with a request, in words (its error codes name the part). */
function malformation(code: string | undefined): string {
  switch (code) {
    case 'HPE_INVALID_METHOD':
      return 'the method is not one HTTP knows';
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'its chunked body is malformed';
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return 'its Content-Length is invalid, or sent with Transfer-Encoding';
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return 'its request line or a header line is malformed or holds a forbidden character';
    case 'HPE_INVALID_URL':
      return 'the request target is not a valid URL';
    default:
      return 'it could not be parsed';
  }
}

function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : randomUUID();
}

const MAX_PATH_SHOWN = 200;

/** The 404 of a path no route serves; a long path is cut in the message (the body would echo kilobytes). */
function noRoute(request: FastifyRequest): NotFoundError {
  const path = pathOf(request.url);
  const shown = path.length > MAX_PATH_SHOWN ? `${path.slice(0, MAX_PATH_SHOWN)}…` : path;
  return new NotFoundError(`No route matches ${request.method} ${shown}.`);
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * An empty body counts as no body; anything else must be UTF-8 (not compressed: no
 * Content-Encoding), valid JSON (no prototype pollution), nested at most MAX_JSON_DEPTH levels.
 */
function parseJson(request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) {
  const encoding = request.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return done(
      new ApiError(
        415,
        'unsupported_media_type',
        `Unsupported Content-Encoding "${encoding}": send the body uncompressed.`,
      ),
    );
  }
  // JSON is UTF-8 (RFC 8259): a body declared in another charset (but ASCII, which UTF-8 contains)
  // would be read as what it is not.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^(utf-?8|us-ascii|ascii)$/i.test(charset)) {
    return done(new ApiError(415, 'unsupported_media_type', `Unsupported charset "${charset}": send JSON in UTF-8.`));
  }
  let text: string;
  try {
    text = typeof body === 'string' ? body : UTF8.decode(body);
  } catch {
    return done(new ApiError(400, 'invalid_json', 'The request body is not valid UTF-8.'));
  }
  if (text.trim() === '') return done(null, undefined);
  // Checked on the text, before parsing: deep nesting costs every later walk over the value.
  if (jsonNestedDeeperThan(text, MAX_JSON_DEPTH)) {
    return done(
      new ApiError(
        400,
        'invalid_json',
        `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
      ),
    );
  }
  try {
    done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
  } catch {
    done(forbiddenKeys(text) ?? new ApiError(400, 'invalid_json', 'The request body is not valid JSON.'));
  }
}

/**
 * Valid JSON that the parser refused for a `__proto__` key (or `constructor.prototype`): an
 * unknown field like any other, 400 `validation_failed` with its path. Parsed again here only
 * to name the path; JSON.parse keeps such a key as plain data, and the value is not used.
 */
function forbiddenKeys(text: string): ValidationError | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  try {
    refuseUnsafeFields(parsed);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  return null;
}

/** Past this, a request line alone is what overflowed the parser's header limit: its URL is too long (414). */
const LONGEST_REQUEST_LINE = 8 * 1024;

/**
 * Whether the bytes the parser refused begin a request whose first line (method, URL, version)
 * is too long by itself. They begin the request when it came in one read, as a request of that
 * size does; otherwise the overflow is taken for the headers' (431).
 */
function overlongRequestLine(raw: Buffer | undefined): boolean {
  if (!raw || !/^[A-Z]+ /.test(raw.subarray(0, 16).toString('latin1'))) return false;
  const end = raw.indexOf('\r\n');
  return (end === -1 ? raw.length : end) > LONGEST_REQUEST_LINE;
}

/**
 * A second router holding every registered path, to tell "unknown path" from "wrong method".
 * A path matched by several templates belongs to the most specific one (the most literal
 * segments): `PATCH /integrations/webhooks/events/` is a method that `/events/` does not serve
 * (405), not an update of a webhook whose id is "events".
 */
function recordRoutes(fastify: FastifyInstance) {
  // Whatever the length of a parameter: the service's router answers an over-long one 414 for a
  // method the path serves, and another method is still 405 (not 404) for it.
  const router = FindMyWay({
    ignoreTrailingSlash: true,
    ignoreDuplicateSlashes: true,
    maxParamLength: Number.MAX_SAFE_INTEGER,
  });
  const templates = new Set<string>();
  const shadowed = new Map<string, boolean>();
  fastify.addHook('onRoute', (route) => {
    templates.add(route.url);
    shadowed.clear();
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const literalSegments = route.url.split('/').filter((s) => s && !s.startsWith(':') && !s.startsWith('*')).length;
    for (const method of methods) {
      if (!METHODS.includes(method as HTTPMethod)) continue;
      try {
        router.on(method as HTTPMethod, route.url, () => undefined, { literalSegments });
      } catch {
        // the same method and path registered twice: already known
      }
    }
  });
  return {
    /**
     * Whether a path matched by `template` may belong to another template as well (one with
     * parameters where this one has literals, or the other way round): only then must the
     * methods of the path be looked up. Answered once per template.
     */
    mayBeShadowed(template: string): boolean {
      let answer = shadowed.get(template);
      if (answer === undefined) {
        answer = [...templates].some((other) => other !== template && templatesOverlap(template, other));
        shadowed.set(template, answer);
      }
      return answer;
    },
    /** The methods the path's most specific template serves (none: an unknown path). */
    allowedMethods(url: string): string[] {
      const path = pathOf(url);
      const found = METHODS.flatMap((method) => {
        const match = router.find(method, path);
        return match ? [{ method, literalSegments: (match.store as { literalSegments: number }).literalSegments }] : [];
      });
      const best = Math.max(...found.map((f) => f.literalSegments));
      return found.filter((f) => f.literalSegments === best).map((f) => f.method);
    },
  };
}

/** Whether some path matches both route templates (a wildcard matches the rest of the path). */
export function templatesOverlap(a: string, b: string): boolean {
  const [x, y] = [a, b].map((t) => t.split('/').filter(Boolean));
  const variable = (segment: string) => segment.includes(':');
  const wildcard = (segments: string[]) => segments.findIndex((segment) => segment.includes('*'));
  const [wx, wy] = [wildcard(x), wildcard(y)];
  // Up to the first wildcard (or the end), the segments must be able to match the same text.
  const compared = Math.min(wx === -1 ? x.length : wx, wy === -1 ? y.length : wy);
  for (let i = 0; i < compared; i++) {
    if (x[i] !== y[i] && !variable(x[i]) && !variable(y[i])) return false;
  }
  if (wx === -1 && wy === -1) return x.length === y.length;
  // A wildcard segment that is a bare `*` matches what follows it, whatever it is; a partial one
  // (`file*`) is taken to match anything too.
  const reaches = (wildcardAt: number, other: string[]) => wildcardAt !== -1 && other.length >= wildcardAt;
  return reaches(wx, y) || reaches(wy, x);
}
