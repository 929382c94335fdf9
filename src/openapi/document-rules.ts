import type { OpenAPIObject } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';

/**
 * The rules every operation of the OpenAPI document follows, applied to what the controllers'
 * decorators produce, so that a route added later gets them without asking: OpenAPI 3.1
 * schemas (nullable written as JSON Schema), the shared responses and headers of API.md
 * section 1, UUID path ids, tags with descriptions, the access rule in each description and
 * examples for every body. `documentProblems` lists what a route still has to declare itself.
 */

export const OPENAPI_VERSION = '3.1.0';

/** Every tag an operation may carry, with its description. */
export const TAGS: Record<string, string> = {
  'users and sessions':
    'Registration, login and the JWT session (access + refresh tokens), password recovery by e-mailed code.',
  sellers: 'Sellers (merchants and their main unified account), their sub-accounts and the access table.',
  'api keys': "A seller's API keys: the credential of its backend (UUID4 secret shown once).",
  plans: 'Rate plans (fees, written by `rates:sync`) and split plans (how a payment is shared), with a simulator.',
  'unified transactions': "Charges on a seller's unified account (card, pix, boleto), voids and split rules.",
  sandbox: 'Test-only actions of the sandbox payment processor (confirming pix and boleto payments).',
  'virtual accounts': 'Double-entry balances of unified accounts: statement, deposits, payments and transfers.',
  operations: 'Health checks and Prometheus metrics for the platform that runs the service.',
  'users admin': "Superusers' view of the user accounts: search, deactivate (tokens stop at once), grant superuser.",
  webhooks:
    "A seller's webhook endpoints (managed with its API key), their Standard Webhooks deliveries and attempts, and its events.",
  'audit log':
    'Append-only record of every privileged or money-affecting action by a person, written in the same transaction.',
  'ticketed events':
    "A seller's ticketed events (ticket types, sales window, orders, check-in) and their public checkout: seats held with the order, never oversold, paid through a unified transaction.",
  subscriptions:
    'Recurring plans of a seller and their subscribers: public subscribe (card on file or pix), renewals, dunning and cancellation.',
};

/** Extension the access decorators write; turned into a sentence of the operation's description. */
export const ACCESS_EXTENSION = 'x-access';
/** Marks a public operation; the document states it as an empty security requirement. */
export const PUBLIC_EXTENSION = 'x-public';

export interface AccessDescription {
  credentials: 'jwt' | 'api_key' | 'jwt_or_api_key';
  permission?: string;
  superuser?: boolean;
  seller?: string;
}

const JSON_TYPE = 'application/json';
const ERROR_BODY_REF = '#/components/schemas/ErrorBodyDto';
/** Path parameters naming a record: UUIDs. */
const ID_PARAMETER = /^(id|.+_id|.+_pk)$/;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const SUCCESS_DESCRIPTIONS: Record<number, string> = {
  200: 'OK.',
  201: 'Created.',
  202: 'Accepted: the work continues in the background.',
  204: 'Done; no body.',
};

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (`validation_failed` with `errors`, `invalid_json`, or a rule of the operation).',
  402: 'The card was declined (`card_declined`).',
  401: 'No credential, or an invalid, expired or inactive one (`WWW-Authenticate: Bearer`).',
  403: 'A valid credential without the right to this operation.',
  404: 'No such record, or one the caller cannot see.',
  409: 'The record is in a state that forbids the operation, or an Idempotency-Key is still in use.',
  413: 'The request body is larger than 1 MiB (`payload_too_large`).',
  414: 'The URL is longer than the service accepts: a path parameter, or the request line as a whole (`uri_too_long`).',
  415: 'The request body is not `application/json`, is declared in a charset other than UTF-8, or is compressed (`unsupported_media_type`).',
  422: 'The Idempotency-Key was already used with a different request (`idempotency_key_reused`).',
  429: 'Too many requests (`rate_limited`); `Retry-After` says when to try again.',
  431: 'The request headers are larger than the service accepts (`headers_too_large`).',
  500: 'An unexpected failure (`internal_error`); the log has the cause, the body never does.',
  503: 'The database is unavailable or the service is shutting down (`service_unavailable`); retry later.',
};

const ERROR_EXAMPLE_CODES: Record<number, string> = {
  400: 'validation_failed',
  401: 'invalid_token',
  402: 'card_declined',
  403: 'permission_denied',
  404: 'not_found',
  409: 'invalid_state',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal_error',
  503: 'service_unavailable',
};

const HEADERS = {
  'X-Request-Id': {
    description:
      'The request id: the one sent when it was 1 to 128 visible ASCII characters other than `"` and `\\`, else a new UUID; also in error bodies.',
    required: true,
    schema: { type: 'string', example: '5f0c6f0e-7f7e-4c43-9a65-2f1d5f1f9b1e' },
  },
  'Idempotent-Replayed': {
    description:
      'Present (`true`) when this is the recorded answer of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'string', pattern: '^[0-9]+$', example: '5' },
  },
  'WWW-Authenticate': {
    description: 'The authentication scheme to use (RFC 6750).',
    required: true,
    schema: { type: 'string', example: 'Bearer' },
  },
};

/** Methods a path does not serve answer 405, documented once here rather than on each path. */
export const CONVENTIONS = `

## Conventions of every operation

- Every response carries \`X-Request-Id\`; every 4xx and 5xx has the body \`ErrorBodyDto\`.
- A known path called with a method it does not list answers **405** \`method_not_allowed\` with an
  \`Allow\` header naming the methods it serves, before any authentication. An unknown path answers 404.
- \`HEAD\` is answered wherever \`GET\` is (the same status and headers, no body), and \`Allow\` lists it.
- Paths are listed without the trailing slash; the same path with it works too.
- A body over 1 MiB answers 413, a body that is not \`application/json\` (or is declared in a charset other than UTF-8, or
  is compressed: \`Content-Encoding\`) 415,
  malformed JSON or a body that is not UTF-8 400 \`invalid_json\`.
- Unexpected failures answer 500 \`internal_error\`; an unreachable database 503 \`service_unavailable\`, as does
  a request still running when a stopping instance's drain time is up (its outcome unknown: retry it with the
  same \`Idempotency-Key\`).
- A request that is not valid HTTP (a header with a control character) answers 400 \`malformed_request\`; a URL
  too long 414 \`uri_too_long\`; headers too large 431 \`headers_too_large\`; a request too slow to arrive 408
  \`request_timeout\`. Each with the error body.
- POSTs that create a record or move money take an \`Idempotency-Key\`; a replayed answer carries
  \`Idempotent-Replayed: true\`.`;

type Json = Record<string, any>;

export function finalizeDocument(document: OpenAPIObject): OpenAPIObject {
  const doc = document as Json;
  doc.openapi = OPENAPI_VERSION;
  doc.info.description = `${doc.info.description}${CONVENTIONS}`;
  const components = (doc.components ??= {});
  for (const [name, schema] of Object.entries(components.schemas ?? {})) toJsonSchema(schema as Json, name);
  components.headers = HEADERS;
  const used = new Set<string>();
  const errorStatuses = new Set<number>();
  for (const pathItem of Object.values(doc.paths) as Json[]) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      finalizeOperation(operation, components.schemas ?? {});
      for (const tag of operation.tags ?? []) used.add(tag);
      for (const response of Object.values(operation.responses) as Json[]) {
        const name = /Error(\d+)$/.exec(String(response.$ref ?? ''));
        if (name) errorStatuses.add(Number(name[1]));
      }
    }
  }
  components.responses = errorResponses([...errorStatuses].sort());
  doc.tags = Object.entries(TAGS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
  return document;
}

function finalizeOperation(operation: Json, schemas: Json): void {
  if (PUBLIC_EXTENSION in operation) {
    delete operation[PUBLIC_EXTENSION];
    operation.security = [];
  }
  const access = operation[ACCESS_EXTENSION] as AccessDescription | undefined;
  delete operation[ACCESS_EXTENSION];
  const accessText = operation.security?.length === 0 ? 'Public: no credential needed.' : describeAccess(access);
  if (accessText)
    operation.description = [operation.description, `**Access:** ${accessText}`].filter(Boolean).join('\n\n');

  for (const parameter of operation.parameters ?? []) {
    if (parameter.schema) toJsonSchema(parameter.schema);
    if (parameter.in === 'path' && ID_PARAMETER.test(parameter.name)) {
      parameter.schema = { type: 'string', format: 'uuid' };
      parameter.description ??= 'Record id (UUID); anything else answers 404.';
    }
  }
  const idempotent = (operation.parameters ?? []).some((p: Json) => p.in === 'header' && p.name === 'Idempotency-Key');

  const body = operation.requestBody?.content?.[JSON_TYPE];
  if (body) {
    toJsonSchema(body.schema);
    body.example ??= exampleOf(body.schema, schemas);
  }
  const responses: Json = (operation.responses ??= {});
  // Any request can be refused for its query (NUL characters), path, URL or headers (too long) or
  // body, or meet a fault; an Idempotency-Key can be in use (409) or reused for another request (422).
  const standard = [
    400,
    414,
    431,
    500,
    503,
    ...(operation.requestBody ? [413, 415] : []),
    ...(idempotent ? [409, 422] : []),
  ];
  for (const status of standard) responses[status] ??= { description: ERROR_DESCRIPTIONS[status] };
  for (const [status, response] of Object.entries(responses) as Array<[string, Json]>) {
    const code = Number(status);
    if (code >= 400 && (!response.description || response.description === ERROR_DESCRIPTIONS[code])) {
      // The shared answer: one definition in components.responses.
      responses[status] = { $ref: `#/components/responses/${errorResponseName(code)}` };
      continue;
    }
    response.description ||= SUCCESS_DESCRIPTIONS[code] ?? STATUS_CODES[code];
    if (code >= 400) response.content ??= { [JSON_TYPE]: { schema: { $ref: ERROR_BODY_REF } } };
    response.headers = { ...responseHeaders(code, idempotent), ...response.headers };
    for (const [type, media] of Object.entries(response.content ?? {}) as Array<[string, Json]>) {
      if (media.schema) toJsonSchema(media.schema);
      if (type !== JSON_TYPE || media.example !== undefined) continue;
      media.example = code >= 400 ? errorExample(code) : exampleOf(media.schema, schemas);
    }
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

function errorResponseName(status: number): string {
  return `Error${status}`;
}

/** The shared error answers, referenced by every operation that may give them. */
function errorResponses(statuses: number[]): Json {
  return Object.fromEntries(
    statuses.map((status) => [
      errorResponseName(status),
      {
        description: ERROR_DESCRIPTIONS[status],
        headers: responseHeaders(status, false),
        content: { [JSON_TYPE]: { schema: { $ref: ERROR_BODY_REF }, example: errorExample(status) } },
      },
    ]),
  );
}

function responseHeaders(status: number, idempotent: boolean): Json {
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  const headers: Json = { 'X-Request-Id': ref('X-Request-Id') };
  if (status < 300 && idempotent) headers['Idempotent-Replayed'] = ref('Idempotent-Replayed');
  if (status === 429 || status === 503) headers['Retry-After'] = ref('Retry-After');
  if (status === 401) headers['WWW-Authenticate'] = ref('WWW-Authenticate');
  return headers;
}

function describeAccess(access: AccessDescription | undefined): string | undefined {
  if (!access) return undefined;
  const credential = {
    jwt: 'a user JWT',
    api_key: "the seller's API key",
    jwt_or_api_key: "a user JWT or the seller's API key",
  }[access.credentials];
  if (access.superuser) return `${credential} of a superuser.`;
  const on = access.seller ? ` on the seller of \`${access.seller}\`` : '';
  const right = access.permission
    ? ` with the permission \`${access.permission}\`${on}`
    : access.seller
      ? ` with any access${on}`
      : '';
  const users = access.credentials === 'api_key' ? '' : ' (superusers pass every check)';
  return `${credential}${right}${users}.`;
}

function errorExample(status: number): Json {
  const code = ERROR_EXAMPLE_CODES[status] ?? 'error';
  return {
    statusCode: status,
    error: STATUS_CODES[status],
    code,
    message: status === 400 ? 'Invalid request: name must be a string.' : `${STATUS_CODES[status]}.`,
    request_id: '5f0c6f0e-7f7e-4c43-9a65-2f1d5f1f9b1e',
    ...(status === 400 ? { errors: { name: ['must be a string'] } } : {}),
  };
}

/**
 * OpenAPI 3.0's `nullable` rewritten as JSON Schema (OpenAPI 3.1): `type: [T, "null"]`, and a
 * nullable reference as `oneOf: [{$ref}, {type: "null"}]` (3.0's `nullable` next to `allOf`
 * never admitted null). A format on an object is a declaration mistake and throws.
 */
export function toJsonSchema(schema: Json, where = 'schema'): void {
  if (!schema || typeof schema !== 'object') return;
  for (const key of ['properties', 'patternProperties', '$defs'] as const) {
    for (const [name, child] of Object.entries(schema[key] ?? {})) toJsonSchema(child as Json, `${where}.${name}`);
  }
  for (const key of ['items', 'additionalProperties', 'not'] as const) {
    if (schema[key] && typeof schema[key] === 'object') toJsonSchema(schema[key], `${where}.${key}`);
  }
  for (const key of ['allOf', 'oneOf', 'anyOf'] as const) {
    for (const child of schema[key] ?? []) toJsonSchema(child, `${where}.${key}`);
  }
  if (schema.type === 'object' && typeof schema.format === 'string') {
    throw new Error(`${where} declares format "${schema.format}" on an object: give the property its type.`);
  }
  if (schema.nullable === undefined) return;
  const nullable = schema.nullable === true;
  delete schema.nullable;
  if (!nullable) return;
  const reference = schema.$ref ? { $ref: schema.$ref } : schema.allOf?.length === 1 ? schema.allOf[0] : undefined;
  if (reference) {
    delete schema.$ref;
    delete schema.allOf;
    delete schema.type;
    schema.oneOf = [reference, { type: 'null' }];
    return;
  }
  if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
  else if (Array.isArray(schema.type) && !schema.type.includes('null')) schema.type.push('null');
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
}

const FORMAT_EXAMPLES: Record<string, unknown> = {
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  'date-time': '2026-11-21T12:00:00.000Z',
  date: '2026-11-21',
  email: 'ana@example.com',
  uri: 'https://example.com/',
};

/** An example built from the schema: the properties' own examples, else one their type and format allow. */
export function exampleOf(schema: Json | undefined, schemas: Json, depth = 0): unknown {
  if (!schema || depth > 8) return undefined;
  if (schema.example !== undefined) return schema.example;
  if (schema.examples?.length) return schema.examples[0];
  if (schema.$ref) return exampleOf(schemas[String(schema.$ref).split('/').pop()!], schemas, depth + 1);
  const variants = schema.oneOf ?? schema.anyOf ?? schema.allOf;
  if (variants?.length) return exampleOf(variants[0], schemas, depth + 1);
  if (schema.enum?.length) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      if (!schema.properties) {
        const value = exampleOf(schema.additionalProperties, schemas, depth + 1);
        return value === undefined ? {} : { key: value };
      }
      const result: Json = {};
      for (const [name, property] of Object.entries(schema.properties) as Array<[string, Json]>) {
        result[name] = exampleOf(property, schemas, depth + 1) ?? null;
      }
      return result;
    }
    case 'array': {
      const item = exampleOf(schema.items, schemas, depth + 1);
      return item === undefined ? [] : [item];
    }
    case 'string': {
      if (schema.format && schema.format in FORMAT_EXAMPLES) return FORMAT_EXAMPLES[schema.format];
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/** What an operation must still declare itself: a tag from TAGS, a summary and a description. */
export function documentProblems(document: OpenAPIObject): string[] {
  const problems: string[] = [];
  for (const [path, pathItem] of Object.entries(document.paths) as Array<[string, Json]>) {
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      const name = `${method.toUpperCase()} ${path}`;
      if (!operation.tags?.length) problems.push(`${name}: no tag (@ApiTags on the controller)`);
      for (const tag of operation.tags ?? []) {
        if (!(tag in TAGS)) problems.push(`${name}: tag "${tag}" has no description in TAGS`);
      }
      if (!operation.summary) problems.push(`${name}: no summary (@ApiOperation)`);
      const written = String(operation.description ?? '').replace(/(^|\n\n)\*\*Access:\*\*.*$/s, '');
      if (!written.trim()) problems.push(`${name}: no description (@ApiOperation({ description }))`);
      if (!operation.security) problems.push(`${name}: no access declaration (@Public or @Authenticated)`);
      const success = Object.keys(operation.responses ?? {}).filter((s) => s.startsWith('2'));
      if (success.length === 0) problems.push(`${name}: no success response`);
    }
  }
  return problems;
}
