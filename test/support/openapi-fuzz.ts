import fc, { Arbitrary } from 'fast-check';

/**
 * fast-check arbitraries made from the OpenAPI document: for each operation, requests whose
 * path and query parameters and JSON body follow the schemas, and mutations of them (a field
 * replaced by hostile text or another JSON type, a field dropped or added, a body that is not
 * the schema's shape, not JSON at all or nested absurdly deep). Only what the document says is
 * used, so operations added later are covered without touching the test.
 */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface Operation {
  operationId?: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  security?: Array<Record<string, string[]>>;
}

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
  example?: unknown;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Sent as is with `Content-Type: application/json` when set. */
  body?: string;
}

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Strings that have broken parsers, validators or SQL somewhere. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff@x.co',
  '\ud800@x.co',
  '😀',
  'ÿ\u202e\u200b',
  "'; DROP TABLE sellers; --",
  '%',
  '%00',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '-1',
  '0.001',
  '99999999999999999999999',
  '2026-02-30T25:61:61Z',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  'x'.repeat(5000),
  '{"a":1}',
  'null',
];

const hostileString = fc.constantFrom(...HOSTILE_STRINGS);

/** Any JSON value, hostile strings included. */
const anyJson: Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hostileString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53 + 1, -(2 ** 31), 1e308),
);

export class OpenApiFuzzer {
  constructor(
    private readonly document: OpenApiDocument,
    /**
     * Ids of records that exist, so that generated requests also reach past "not found"; the
     * first (the seller most routes are under) is picked most often.
     */
    private readonly knownIds: string[],
  ) {}

  operations(): Array<{ method: string; path: string; operation: Operation }> {
    const result: Array<{ method: string; path: string; operation: Operation }> = [];
    for (const [path, item] of Object.entries(this.document.paths)) {
      for (const method of HTTP_METHODS) {
        if (item[method]) result.push({ method: method.toUpperCase(), path, operation: item[method] });
      }
    }
    return result;
  }

  /** Requests to one operation: valid by the schema, mutated, or plainly hostile. */
  requests(method: string, template: string, operation: Operation): Arbitrary<FuzzRequest> {
    const parameters = operation.parameters ?? [];
    const pathParams = parameters.filter((p) => p.in === 'path');
    const queryParams = parameters.filter((p) => p.in === 'query');
    const bodySchema = operation.requestBody?.content?.['application/json']?.schema;

    const pathArb = fc
      .tuple(...pathParams.map((p) => this.pathValue(p.schema ?? {})))
      .map((values) =>
        pathParams.reduce((path, p, i) => path.replace(`{${p.name}}`, encodeLoosely(values[i])), template),
      );
    const queryArb = fc
      .tuple(
        ...queryParams.map((p) =>
          fc.option(
            fc.oneof({ weight: 12, arbitrary: this.value(p.schema ?? {}, 0) }, { weight: 1, arbitrary: anyJson }),
            {
              nil: undefined,
              freq: 2,
            },
          ),
        ),
      )
      .chain((values) =>
        fc.option(fc.tuple(fc.string({ maxLength: 8 }), hostileString), { nil: undefined, freq: 4 }).map((extra) => {
          const pairs = queryParams
            .map((p, i) => [p.name, values[i]] as const)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
          if (extra) pairs.push(extra);
          return pairs.map(([k, v]) => `${encodeLoosely(k)}=${encodeLoosely(String(v))}`).join('&');
        }),
      );
    const bodyArb: Arbitrary<string | undefined> = bodySchema
      ? this.body(bodySchema)
      : fc.option(
          fc.oneof(
            fc.constant('{}'),
            anyJson.map((v) => JSON.stringify(v)),
          ),
          { nil: undefined, freq: 3 },
        );

    return fc
      .record({
        path: pathArb,
        query: queryArb,
        body: bodyArb,
        idempotencyKey: fc.option(fc.oneof(fc.uuid(), hostileString.filter(isHeaderSafe)), { nil: undefined }),
      })
      .map(({ path, query, body, idempotencyKey }): FuzzRequest => ({
        method,
        path: query ? `${path}?${query}` : path,
        headers: idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : ({} as Record<string, string>),
        body,
      }));
  }

  private pathValue(schema: Schema): Arbitrary<string> {
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant(this.knownIds[0]) },
      { weight: 3, arbitrary: fc.constantFrom(...this.knownIds) },
      { weight: 2, arbitrary: this.value(schema, 0).map(String) },
      { weight: 1, arbitrary: fc.uuid() },
      { weight: 1, arbitrary: hostileString.filter((s) => s !== '') },
    );
  }

  private body(schema: Schema): Arbitrary<string> {
    const valid = this.value(schema, 0);
    return fc.oneof(
      { weight: 4, arbitrary: valid.map((v) => JSON.stringify(v)) },
      { weight: 6, arbitrary: mutated(valid).map((v) => JSON.stringify(v)) },
      { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.constantFrom('{', '{"a":', '[1,]', 'undefined', "{'a': 1}", '{"__proto__": {"x": 1}}'),
          fc.integer({ min: 60, max: 5000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
          fc.string({ maxLength: 40 }),
        ),
      },
    );
  }

  /** Values that follow the schema (as far as the document describes it). */
  value(schema: Schema, depth: number): Arbitrary<unknown> {
    const resolved = this.resolve(schema);
    const base = this.valueOfType(resolved, depth);
    const withExample = resolved.example !== undefined ? fc.oneof(fc.constant(resolved.example), base) : base;
    return resolved.nullable ? fc.option(withExample, { nil: null, freq: 5 }) : withExample;
  }

  private valueOfType(schema: Schema, depth: number): Arbitrary<unknown> {
    if (schema.enum?.length) return fc.constantFrom(...schema.enum);
    if (schema.format === 'uuid') return fc.oneof(fc.constantFrom(...this.knownIds), fc.uuid());
    const choices = schema.oneOf ?? schema.anyOf;
    if (choices?.length) return fc.oneof(...choices.map((s) => this.value(s, depth + 1)));
    switch (schema.type) {
      case 'string':
        return this.string(schema);
      case 'integer':
        return fc.integer({ min: schema.minimum ?? -1_000, max: schema.maximum ?? 1_000_000 });
      case 'number':
        return fc.oneof(
          fc.integer({ min: schema.minimum ?? -1_000, max: schema.maximum ?? 1_000_000 }),
          fc.double({ min: schema.minimum ?? -1_000, max: schema.maximum ?? 1_000_000, noNaN: true }),
        );
      case 'boolean':
        return fc.boolean();
      case 'array':
        return depth > 4 ? fc.constant([]) : fc.array(this.value(schema.items ?? {}, depth + 1), { maxLength: 3 });
      case 'object':
        return this.object(schema, depth);
      default:
        return schema.properties ? this.object(schema, depth) : anyJson;
    }
  }

  private string(schema: Schema): Arbitrary<string> {
    if (schema.format === 'date-time') {
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString());
    }
    if (schema.format === 'email') return fc.emailAddress();
    if (schema.pattern) {
      try {
        return fc.stringMatching(new RegExp(schema.pattern));
      } catch {
        // a pattern JavaScript cannot read: fall through to plain strings
      }
    }
    return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 200) });
  }

  private object(schema: Schema, depth: number): Arbitrary<Record<string, unknown>> {
    if (depth > 4) return fc.constant({});
    const properties = Object.fromEntries(
      Object.entries(schema.properties ?? {}).map(([key, child]) => [key, this.value(child, depth + 1)]),
    );
    const record = fc.record(properties, { requiredKeys: schema.required ?? [] });
    const extra = schema.additionalProperties;
    if (!extra || Object.keys(properties).length > 0) return record;
    const values = extra === true ? anyJson : this.value(extra, depth + 1);
    return fc.dictionary(fc.string({ maxLength: 12 }), values, { maxKeys: 4 });
  }

  private resolve(schema: Schema): Schema {
    let current = schema;
    for (let hops = 0; hops < 20; hops++) {
      if (current.$ref) {
        const name = current.$ref.replace('#/components/schemas/', '');
        current = { ...this.document.components?.schemas?.[name], nullable: current.nullable };
      } else if (current.allOf?.length === 1 && !current.properties) {
        const { allOf, ...rest } = current;
        current = { ...this.resolveShallow(allOf[0]), ...rest };
      } else {
        return current;
      }
    }
    return current;
  }

  private resolveShallow(schema: Schema): Schema {
    if (!schema.$ref) return schema;
    return this.document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] ?? {};
  }
}

/** A valid value with one change somewhere: a field replaced, dropped or added. */
function mutated(valid: Arbitrary<unknown>): Arbitrary<unknown> {
  return fc
    .tuple(
      valid,
      fc.nat(),
      fc.constantFrom('replace', 'drop', 'add'),
      fc.oneof({ weight: 2, arbitrary: hostileString }, { weight: 1, arbitrary: anyJson }),
      fc.string({ maxLength: 10 }),
    )
    .map(([value, pick, kind, replacement, newKey]) => {
      const slots = containers(value);
      if (slots.length === 0) return replacement;
      const { container, key } = slots[pick % slots.length];
      const copy = structuredClone(value);
      const target = follow(copy, container) as Record<string, unknown> | unknown[];
      if (kind === 'add' && !Array.isArray(target)) target[newKey || 'unexpected'] = replacement;
      else if (kind === 'drop' && !Array.isArray(target)) delete target[key as string];
      else (target as Record<string, unknown>)[key] = replacement;
      return copy;
    });
}

/** Every (container path, key) in a JSON value, so a mutation can pick one. */
function containers(value: unknown): Array<{ container: Array<string | number>; key: string | number }> {
  const result: Array<{ container: Array<string | number>; key: string | number }> = [];
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    for (const [key, child] of Object.entries(current)) {
      const k = Array.isArray(current) ? Number(key) : key;
      result.push({ container: path, key: k });
      stack.push({ value: child, path: [...path, k] });
    }
  }
  return result;
}

function follow(value: unknown, path: Array<string | number>): unknown {
  return path.reduce((current: any, key) => current[key], value);
}

function isHeaderSafe(value: string): boolean {
  return /^[\x20-\x7e]*$/.test(value);
}

/** encodeURIComponent, except that a lone surrogate is sent as the (invalid) UTF-8 of its code unit. */
export function encodeLoosely(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...value]
      .map((ch) => {
        const code = ch.charCodeAt(0);
        if (ch.length === 1 && code >= 0xd800 && code <= 0xdfff) {
          return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
        }
        return encodeURIComponent(ch);
      })
      .join('');
  }
}
