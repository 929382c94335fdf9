import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/paths';
import { HttpResponse } from '../support/http';
import { createApiKey, createUser, TestUser } from '../support/identity';
import { OpenApiDocument, OpenApiFuzzer } from '../support/openapi-fuzz';
import { CARDS, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Every operation of the committed openapi.json, called with requests generated from its
 * schemas and mutations of them, as every kind of caller: never a 5xx, and every 4xx carries
 * the error body of API.md section 1. FUZZ_RUNS sets the requests per operation.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const document = JSON.parse(readFileSync(join(PROJECT_ROOT, 'openapi.json'), 'utf8')) as OpenApiDocument;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('OpenAPI fuzz', () => {
  let t: TestApp;
  let fuzzer: OpenApiFuzzer;
  let credentials: Record<string, string | undefined>;

  beforeAll(async () => {
    // A client address per request (X-Forwarded-For), so rate limits do not hide the routes behind them.
    t = await startTestApp({ env: { TRUST_PROXY: 'true' } });
    const superuser = await createUser(t, { superuser: true });
    const plainUser: TestUser = await createUser(t);
    const seller = await payingSeller(t, superuser);
    const key = await createApiKey(t, superuser.access, seller.sellerId);
    const charge = await t.http.post(
      `/unified/accounts/sellers/${seller.sellerId}/transactions`,
      { amount: '10.00', payment_type: 'credit', card: CARDS.visa },
      { token: superuser.access },
    );
    const accounts = await t.http.get(`/uniconta/seller/${seller.sellerId}/virtualaccounts`, {
      token: superuser.access,
    });
    const ids = new Set<string>([seller.sellerId, seller.ratePlanId, seller.splitPlanId, seller.master, key.id]);
    collectIds(charge.body, ids);
    collectIds(accounts.body, ids);
    ids.add(plainUser.id);
    fuzzer = new OpenApiFuzzer(document, [...ids]);
    credentials = {
      none: undefined,
      garbage: 'not-a-token',
      superuser: superuser.access,
      user: plainUser.access,
      apiKey: key.key,
    };
  });
  afterAll(() => t.close());

  const operations = new OpenApiFuzzer(document, []).operations();

  it('covers every operation of openapi.json', () => {
    expect(operations.length).toBeGreaterThan(30);
  });

  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s',
    async (_name, { method, path, operation }) => {
      const caller = fc.constantFrom(...Object.keys(credentials));
      const address = fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `10.77.${a}.${b}`);
      await fc.assert(
        fc.asyncProperty(fuzzer.requests(method, path, operation), caller, address, async (request, who, ip) => {
          const res = await t.http.request(request.method, request.path, {
            token: credentials[who],
            headers: {
              ...request.headers,
              'x-forwarded-for': ip,
              ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
            },
            rawBody: request.method === 'GET' ? undefined : request.body,
          });
          expectContractStatus(
            res,
            `${request.method} ${request.path} as ${who}\nbody: ${request.body?.slice(0, 500)}`,
          );
        }),
        { numRuns: RUNS },
      );
    },
  );
});

function expectContractStatus(res: HttpResponse, request: string): void {
  const context = `${request}\n→ ${res.status} ${res.text.slice(0, 500)}`;
  if (res.status >= 500) throw new Error(`server error:\n${context}`);
  if (res.status < 400) return;
  const body = res.body;
  const ok =
    body !== null &&
    typeof body === 'object' &&
    body.statusCode === res.status &&
    typeof body.error === 'string' &&
    typeof body.code === 'string' &&
    /^[a-z][a-z0-9_]*$/.test(body.code) &&
    typeof body.message === 'string' &&
    body.message.length > 0 &&
    typeof body.request_id === 'string' &&
    body.request_id === res.headers.get('x-request-id');
  if (!ok) throw new Error(`4xx without the error body:\n${context}`);
}

function collectIds(value: unknown, into: Set<string>): void {
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string' && UUID.test(current)) into.add(current);
    else if (current !== null && typeof current === 'object') stack.push(...Object.values(current));
  }
}
