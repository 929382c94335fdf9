import { ContractCall, ContractChecker } from './contract';

/** The contract check must catch drift, or the e2e suite proves nothing about openapi.json. */
describe('ContractChecker', () => {
  const document = {
    openapi: '3.1.0',
    paths: {
      '/things/{id}': {
        get: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: {
            '200': {
              description: 'OK.',
              headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
            },
            '404': { $ref: '#/components/responses/Error404' },
          },
        },
        patch: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ThingPatch' } } },
          },
          responses: { '204': { description: 'Done.' }, '400': { $ref: '#/components/responses/Error400' } },
        },
      },
    },
    webhooks: {
      'thing.made': {
        post: {
          parameters: [
            { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string', format: 'uuid' } },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'type', 'data'],
                  properties: {
                    id: { type: 'string', format: 'uuid' },
                    type: { type: 'string', const: 'thing.made' },
                    data: { $ref: '#/components/schemas/Thing' },
                  },
                },
              },
            },
          },
          responses: { '2XX': { description: 'Received.' } },
        },
      },
    },
    components: {
      headers: { 'X-Request-Id': { required: true, schema: { type: 'string' } } },
      responses: {
        Error400: {
          description: 'x',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } } },
        },
        Error404: {
          description: 'x',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } } },
        },
      },
      schemas: {
        ErrorBodyDto: {
          type: 'object',
          properties: { statusCode: { type: 'number' }, code: { type: 'string' } },
          required: ['statusCode', 'code'],
        },
        Thing: {
          type: 'object',
          properties: {
            id: { type: 'string', format: 'uuid' },
            pix: { oneOf: [{ $ref: '#/components/schemas/Pix' }, { type: 'null' }] },
          },
          required: ['id', 'pix'],
        },
        Pix: { type: 'object', properties: { qr_code: { type: 'string' } }, required: ['qr_code'] },
        ThingPatch: { type: 'object', properties: { rate_plan: { type: ['string', 'null'], format: 'uuid' } } },
      },
    },
  };
  const checker = new ContractChecker(document);
  const id = '3fa85f64-5717-4562-b3fc-2c963f66afa6';
  const call = (overrides: Partial<ContractCall> & { headers?: Record<string, string> }): ContractCall => ({
    method: 'GET',
    url: `/things/${id}/`,
    requestHeaders: {},
    requestBody: undefined,
    status: 200,
    responseText: JSON.stringify({ id, pix: null }),
    ...overrides,
    responseHeaders: new Headers({ 'x-request-id': 'r1', 'content-type': 'application/json', ...overrides.headers }),
  });

  it('accepts an answer the document describes (null for a nullable reference, trailing slash)', () => {
    expect(checker.check(call({}))).toEqual([]);
    expect(checker.check(call({ responseText: JSON.stringify({ id, pix: { qr_code: 'x' } }) }))).toEqual([]);
  });

  it('refuses an undocumented property, a wrong type, a missing field and an undocumented status', () => {
    expect(checker.check(call({ responseText: JSON.stringify({ id, pix: null, extra: 1 }) }))[0]).toMatch(
      /must NOT have additional properties/,
    );
    expect(checker.check(call({ responseText: JSON.stringify({ id, pix: 'x' }) }))[0]).toMatch(/pix/);
    expect(checker.check(call({ responseText: JSON.stringify({ id }) }))[0]).toMatch(
      /must have required property 'pix'/,
    );
    expect(checker.check(call({ status: 500 }))[0]).toMatch(/status 500 is not documented/);
  });

  it('refuses a missing required header and an undocumented content type', () => {
    const noRequestId = call({});
    noRequestId.responseHeaders.delete('x-request-id');
    expect(checker.check(noRequestId)).toEqual(expect.arrayContaining([expect.stringMatching(/X-Request-Id/)]));
    expect(checker.check(call({ headers: { 'content-type': 'text/html' } }))[0]).toMatch(/content type "text\/html"/);
  });

  it('fails when the server accepts a request the document refuses', () => {
    const refusal = JSON.stringify({ statusCode: 400, code: 'validation_failed' });
    const patch = (body: unknown, status: number) =>
      checker.check(
        call({
          method: 'PATCH',
          status,
          requestBody: JSON.stringify(body),
          requestHeaders: { 'content-type': 'application/json' },
          responseText: status === 400 ? refusal : '',
          headers: { 'content-type': status === 400 ? 'application/json' : '' },
        }),
      );
    expect(patch({ rate_plan: id }, 204)).toEqual([]);
    expect(patch({ rate_plan: null }, 204)).toEqual([]);
    expect(patch({ rate_plan: { id } }, 204)[0]).toMatch(/accepted \(204\) a request the document refuses/);
    expect(patch({ rate_plan: { id } }, 400)).toEqual([]);
  });

  it("checks a webhook the service sent against the document's webhooks: headers, type and body, strictly", () => {
    const sent = (data: object, type = 'thing.made') => JSON.stringify({ id, type, data });
    expect(checker.checkWebhook({ 'webhook-id': id }, sent({ id, pix: null }))).toEqual([]);
    expect(checker.checkWebhook({}, sent({ id, pix: null }))).toEqual([
      'webhook thing.made: header webhook-id is missing',
    ]);
    expect(checker.checkWebhook({ 'webhook-id': id }, sent({ id, pix: null, extra: 1 }))[0]).toMatch(
      /webhook thing.made: body .*must NOT have additional properties/,
    );
    expect(checker.checkWebhook({ 'webhook-id': id }, sent({ id }))[0]).toMatch(/must have required property 'pix'/);
    expect(checker.checkWebhook({ 'webhook-id': id }, sent({ id, pix: null }, 'thing.lost'))).toEqual([
      `webhook: event type "thing.lost" is not in the document's webhooks`,
    ]);
  });

  it('allows an undocumented method only as 405 naming the documented ones, and an unknown path only as 404', () => {
    const error = JSON.stringify({ statusCode: 405, code: 'method_not_allowed' });
    expect(
      checker.check(
        call({ method: 'DELETE', status: 405, responseText: error, headers: { allow: 'GET, HEAD, PATCH' } }),
      ),
    ).toEqual([]);
    expect(
      checker.check(call({ method: 'DELETE', status: 405, responseText: error, headers: { allow: 'GET' } }))[0],
    ).toMatch(/Allow "GET" differs/);
    expect(checker.check(call({ method: 'DELETE', status: 204, responseText: '' }))[0]).toMatch(
      /is not in openapi.json/,
    );
    const notFound = JSON.stringify({ statusCode: 404, code: 'not_found' });
    expect(checker.check(call({ url: '/nope', status: 404, responseText: notFound }))).toEqual([]);
    expect(checker.check(call({ url: '/nope', status: 200 }))[0]).toMatch(/not in openapi.json/);
  });
});
