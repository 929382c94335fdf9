import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OpenAPIObject } from '@nestjs/swagger';
import { EVENT_TYPES } from '../webhooks/outbox';
import { documentProblems, exampleOf, toJsonSchema } from './document-rules';
import { generateOpenApiDocument, serializeOpenApi } from './generate';

describe('openapi.json', () => {
  let generated: OpenAPIObject;
  beforeAll(async () => {
    generated = await generateOpenApiDocument();
  });

  it('is the document the code generates (run `npm run openapi` after changing the API)', () => {
    const committed = readFileSync(join(__dirname, '../../openapi.json'), 'utf8');
    expect(serializeOpenApi(generated)).toBe(committed);
  });

  it('declares for every operation a known tag, a summary, a description, its access and a success answer', () => {
    expect(documentProblems(generated)).toEqual([]);
  });

  it('gives every JSON body and answer an example', () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(generated.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, any>)) {
        const request = operation.requestBody?.content?.['application/json'];
        if (request && request.example === undefined) missing.push(`${method} ${path} request`);
        for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
          const media = response.content?.['application/json'];
          if (media && media.example === undefined) missing.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('describes under webhooks the request of every event type, its data naming schemas of the document', () => {
    const webhooks = (generated as any).webhooks;
    expect(Object.keys(webhooks)).toEqual(EVENT_TYPES);
    const refs = JSON.stringify(webhooks).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    expect(refs.length).toBeGreaterThanOrEqual(EVENT_TYPES.length);
    for (const ref of refs) expect(generated.components?.schemas).toHaveProperty(ref.split('/').pop()!);
    for (const type of EVENT_TYPES) {
      const body = webhooks[type].post.requestBody.content['application/json'].schema;
      expect(body.properties.type).toEqual({ type: 'string', const: type });
    }
  });

  it('takes UUID path ids and lists the shared answers on every operation', () => {
    for (const [path, item] of Object.entries(generated.paths)) {
      for (const operation of Object.values(item as Record<string, any>)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in === 'path' && /(^id|_id|_pk)$/.test(parameter.name)) {
            expect({ path, schema: parameter.schema }).toEqual({ path, schema: { type: 'string', format: 'uuid' } });
          }
        }
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '500', '503']));
        if (operation.requestBody) {
          expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['413', '415']));
        }
      }
    }
  });
});

describe('toJsonSchema', () => {
  it('writes a nullable reference as oneOf with null', () => {
    const schema: any = {
      nullable: true,
      type: 'object',
      allOf: [{ $ref: '#/components/schemas/A' }],
      description: 'd',
    };
    toJsonSchema(schema);
    expect(schema).toEqual({ description: 'd', oneOf: [{ $ref: '#/components/schemas/A' }, { type: 'null' }] });
  });

  it('adds null to the type and the enum of a nullable value, at any depth', () => {
    const schema: any = {
      type: 'object',
      properties: {
        a: { type: 'string', nullable: true, enum: ['x'] },
        b: { type: 'array', items: { type: 'integer', nullable: true } },
      },
    };
    toJsonSchema(schema);
    expect(schema.properties.a).toEqual({ type: ['string', 'null'], enum: ['x', null] });
    expect(schema.properties.b.items).toEqual({ type: ['integer', 'null'] });
  });

  it('refuses a format on an object (a UUID string declared without its type)', () => {
    expect(() =>
      toJsonSchema({ type: 'object', properties: { rate_plan: { type: 'object', format: 'uuid' } } }, 'X'),
    ).toThrow('X.rate_plan declares format "uuid" on an object');
  });
});

describe('exampleOf', () => {
  it("builds an object from its properties' examples, references and formats", () => {
    const schemas = { B: { type: 'object', properties: { when: { type: 'string', format: 'date-time' } } } };
    const example = exampleOf(
      {
        type: 'object',
        properties: {
          amount: { type: 'string', example: '150.00' },
          kind: { type: 'string', enum: ['pix', 'card'] },
          b: { oneOf: [{ $ref: '#/components/schemas/B' }, { type: 'null' }] },
          list: { type: 'array', items: { type: 'integer', minimum: 2 } },
        },
      },
      schemas,
    );
    expect(example).toEqual({ amount: '150.00', kind: 'pix', b: { when: '2026-11-21T12:00:00.000Z' }, list: [2] });
  });
});
