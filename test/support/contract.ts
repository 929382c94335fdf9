import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The strict contract check of e2e traffic: every call made through the shared HTTP client
 * (test/support/http.ts) is checked against the committed openapi.json, so the document
 * cannot drift from the server. The rules:
 * - a documented operation: a request the document refuses must be refused (4xx); the answer's
 *   status must be listed, its required headers present, its body valid against the schema
 *   with no undocumented property (`additionalProperties: false` added to every object);
 * - a documented path with an undocumented method: 405 with `Allow` naming exactly the
 *   documented methods and the error body (the document's conventions);
 * - an undocumented path: 404 with the error body. Test-only routes (/test-fixtures*) and the
 *   document's own pages (/docs) are outside the contract.
 */

type Json = Record<string, any>;

export interface ContractCall {
  method: string;
  /** Path and query, as sent. */
  url: string;
  requestHeaders: Record<string, string>;
  requestBody: string | Buffer | undefined;
  status: number;
  responseHeaders: Headers;
  responseText: string;
}

const OUTSIDE_CONTRACT = [/^\/test-fixtures/, /^\/docs(\/|$)/];
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const SCHEMA_ID = 'openapi';

interface Operation {
  method: string;
  template: string;
  spec: Json;
}

interface PathEntry {
  template: string;
  pattern: RegExp;
  names: string[];
  literalSegments: number;
  item: Json;
}

export class ContractChecker {
  private readonly paths: PathEntry[];
  /** Bodies and answers: strict, no type coercion. */
  private readonly ajv: Ajv2020;
  /** Path and query parameters arrive as strings. */
  private readonly coercing: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    const defs = forAjv(document.components?.schemas ?? {});
    const make = (coerceTypes: boolean) => {
      const ajv = new Ajv2020({ allErrors: true, strict: true, coerceTypes, allowUnionTypes: true });
      addFormats(ajv);
      ajv.addKeyword('example');
      ajv.addSchema({ $id: SCHEMA_ID, $defs: defs });
      return ajv;
    };
    this.ajv = make(false);
    this.coercing = make(true);
    this.paths = Object.entries(document.paths as Json)
      .map(([template, item]) => {
        const names: string[] = [];
        const source = template
          .split('/')
          .map((segment) => {
            const name = /^\{(.+)\}$/.exec(segment);
            if (!name) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
            names.push(name[1]);
            return '([^/]+)';
          })
          .join('/');
        const literalSegments = template.split('/').filter((s) => s && !s.startsWith('{')).length;
        return { template, pattern: new RegExp(`^${source}/?$`), names, literalSegments, item: item as Json };
      })
      .sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /** The problems of one call; empty when it matches the document. */
  check(call: ContractCall): string[] {
    const url = new URL(call.url, 'http://contract.invalid');
    const path = url.pathname.replace(/\/{2,}/g, '/');
    if (OUTSIDE_CONTRACT.some((pattern) => pattern.test(path))) return [];
    const method = call.method.toLowerCase();
    const match = this.matchPath(path);
    if (!match) {
      return call.status === 404
        ? this.checkErrorAnswer(call, 'undocumented path')
        : [`${path} is not in openapi.json, yet it answered ${call.status} (only 404 is allowed)`];
    }
    const operation = match.entry.item[method];
    if (!operation) {
      const documented = METHODS.filter((m) => match.entry.item[m]).map((m) => m.toUpperCase());
      // HEAD goes with GET (HTTP semantics; the document lists GET only).
      if (documented.includes('GET')) documented.push('HEAD');
      const problems: string[] = [];
      if (call.status !== 405) {
        problems.push(`${call.method} ${match.entry.template} is not in openapi.json, yet it answered ${call.status}`);
      }
      const allow = (call.responseHeaders.get('allow') ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean);
      if (call.status === 405 && [...allow].sort().join() !== [...documented].sort().join()) {
        problems.push(`405 Allow "${allow.join(', ')}" differs from the documented methods ${documented.join(', ')}`);
      }
      return [...problems, ...this.checkErrorAnswer(call, 'method not allowed')];
    }
    const op: Operation = { method, template: match.entry.template, spec: operation };
    const requestProblems = this.requestProblems(op, match.params, url.searchParams, call);
    const problems = this.responseProblems(op, call);
    if (requestProblems.length > 0 && call.status < 400) {
      problems.push(
        `the server accepted (${call.status}) a request the document refuses: ${requestProblems.join('; ')}`,
      );
    }
    return problems.map((p) => `${call.method} ${op.template} → ${call.status}: ${p}`);
  }

  /**
   * The problems of a request the service sent to a webhook endpoint, against its event type's
   * entry of the document's `webhooks`: the signature headers and the body, strictly.
   */
  checkWebhook(headers: Record<string, string | string[] | undefined>, body: string): string[] {
    let payload: Json;
    try {
      payload = JSON.parse(body);
    } catch {
      return ['webhook: the body is not valid JSON'];
    }
    const operation = this.document.webhooks?.[payload?.type]?.post;
    if (!operation) return [`webhook: event type "${payload?.type}" is not in the document's webhooks`];
    const problems: string[] = [];
    for (const parameter of (operation.parameters ?? []) as Json[]) {
      const value = headers[parameter.name];
      if (typeof value !== 'string') {
        if (parameter.required) problems.push(`header ${parameter.name} is missing`);
        continue;
      }
      const errors = this.validate(this.coercing, parameter.schema ?? {}, value);
      if (errors) problems.push(`header ${parameter.name} ${errors}`);
    }
    const errors = this.validate(this.ajv, operation.requestBody.content['application/json'].schema, payload);
    if (errors) problems.push(`body ${errors}`);
    return problems.map((p) => `webhook ${payload.type}: ${p}`);
  }

  private matchPath(path: string): { entry: PathEntry; params: Record<string, string> } | undefined {
    for (const entry of this.paths) {
      const found = entry.pattern.exec(path);
      if (!found) continue;
      const params: Record<string, string> = {};
      entry.names.forEach((name, i) => (params[name] = decodePathSegment(found[i + 1])));
      return { entry, params };
    }
    return undefined;
  }

  private requestProblems(
    op: Operation,
    pathParams: Record<string, string>,
    query: URLSearchParams,
    call: ContractCall,
  ): string[] {
    const problems: string[] = [];
    const parameters: Json[] = op.spec.parameters ?? [];
    for (const parameter of parameters) {
      const raw =
        parameter.in === 'path'
          ? pathParams[parameter.name]
          : parameter.in === 'query'
            ? queryValue(query, parameter)
            : parameter.in === 'header'
              ? headerValue(call.requestHeaders, parameter.name)
              : undefined;
      if (raw === undefined) {
        if (parameter.required) problems.push(`${parameter.in} parameter ${parameter.name} is missing`);
        continue;
      }
      const errors = this.validate(this.coercing, parameter.schema ?? {}, raw);
      if (errors) problems.push(`${parameter.in} parameter ${parameter.name} ${errors}`);
    }
    // Query parameters the document does not list are not checked: OpenAPI cannot forbid them, and
    // operations without query parameters ignore them (those with some refuse unknown ones: 400).

    const sent = call.requestBody !== undefined && call.requestBody.length > 0;
    const declared = op.spec.requestBody;
    // A body sent to an operation that takes none is ignored by the server, as undocumented query
    // parameters are: nothing to judge.
    if (!declared) return problems;
    if (!sent) {
      if (declared.required) problems.push('the required body is missing');
      return problems;
    }
    const type = mediaType(headerValue(call.requestHeaders, 'content-type'));
    const media = declared.content?.[type];
    if (!media) return [...problems, `content type "${type}" is not documented`];
    let body: unknown;
    try {
      body = JSON.parse(call.requestBody!.toString());
    } catch {
      return [...problems, 'the body is not valid JSON'];
    }
    const errors = this.validate(this.ajv, media.schema ?? {}, body);
    if (errors) problems.push(`body ${errors}`);
    return problems;
  }

  private responseProblems(op: Operation, call: ContractCall): string[] {
    const responses: Json = op.spec.responses ?? {};
    const declared = responses[String(call.status)] ?? responses[`${String(call.status)[0]}XX`] ?? responses.default;
    if (!declared) return [`status ${call.status} is not documented (${Object.keys(responses).join(', ')})`];
    return this.answerProblems(this.resolve(declared), call);
  }

  /** An answer outside any operation: the error body of the conventions. */
  private checkErrorAnswer(call: ContractCall, what: string): string[] {
    const errorResponse = {
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } } },
    };
    return this.answerProblems(errorResponse, call).map((p) => `${call.method} ${call.url} (${what}): ${p}`);
  }

  private answerProblems(response: Json, call: ContractCall): string[] {
    const problems: string[] = [];
    if (!call.responseHeaders.get('x-request-id')) problems.push('no X-Request-Id header');
    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const spec = this.resolve(header);
      const value = call.responseHeaders.get(name);
      if (value === null) {
        if (spec.required) problems.push(`required header ${name} is missing`);
        continue;
      }
      const errors = this.validate(this.coercing, spec.schema ?? {}, value);
      if (errors) problems.push(`header ${name} ${errors}`);
    }
    const content: Json | undefined = response.content;
    if (!content) {
      if (call.responseText.length > 0) problems.push('a body was answered where the document declares none');
      return problems;
    }
    const type = mediaType(call.responseHeaders.get('content-type'));
    const media = content[type];
    if (!media) return [...problems, `content type "${type}" is not documented (${Object.keys(content).join(', ')})`];
    let body: unknown = call.responseText;
    if (type.endsWith('json')) {
      try {
        body = JSON.parse(call.responseText);
      } catch {
        return [...problems, 'the body is not valid JSON'];
      }
    }
    const errors = this.validate(this.ajv, media.schema ?? {}, body);
    if (errors) problems.push(`body ${errors}`);
    return problems;
  }

  private resolve(value: Json): Json {
    let current = value;
    while (current?.$ref) {
      current = String(current.$ref)
        .slice(2)
        .split('/')
        .reduce((node: Json, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
    }
    return current;
  }

  private validate(ajv: Ajv2020, schema: Json, value: unknown): string | undefined {
    const key = `${ajv === this.ajv ? 'strict' : 'coercing'}:${JSON.stringify(schema)}`;
    let validator = this.compiled.get(key);
    if (!validator) {
      validator = ajv.compile(forAjv(schema));
      this.compiled.set(key, validator);
    }
    if (validator(value)) return undefined;
    return ajv.errorsText(validator.errors, { dataVar: '' });
  }
}

/**
 * A schema of the document made ready for Ajv: references rewritten to the schema registered
 * with it, and every object with properties closed (an undocumented field is drift).
 */
function forAjv<T>(value: T): T {
  if (Array.isArray(value)) return value.map(forAjv) as T;
  if (!value || typeof value !== 'object') return value;
  const result: Json = {};
  for (const [key, child] of Object.entries(value as Json)) {
    if (key === '$ref' && typeof child === 'string') {
      result[key] = child.replace('#/components/schemas/', `${SCHEMA_ID}#/$defs/`);
    } else if (key === 'properties') {
      result[key] = Object.fromEntries(Object.entries(child as Json).map(([name, schema]) => [name, forAjv(schema)]));
    } else {
      result[key] = key === 'example' ? child : forAjv(child);
    }
  }
  if (result.properties && result.additionalProperties === undefined && !result.allOf) {
    result.additionalProperties = false;
  }
  return result as T;
}

function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return found?.[1];
}

function queryValue(query: URLSearchParams, parameter: Json): unknown {
  const values = query.getAll(parameter.name);
  if (values.length === 0) return undefined;
  return parameter.schema?.type === 'array' ? values : values.length === 1 ? values[0] : values;
}

let shared: ContractChecker | undefined;

/** The checker of the committed openapi.json (loaded once per test file). */
export function contractChecker(): ContractChecker {
  shared ??= new ContractChecker(JSON.parse(readFileSync(join(__dirname, '../../openapi.json'), 'utf8')));
  return shared;
}

/** A path parameter as the server reads it; one that is not percent-encoded UTF-8 stays as sent (the server refuses it). */
function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
