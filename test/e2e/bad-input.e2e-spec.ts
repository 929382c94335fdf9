import { connect } from 'node:net';
import { createSeller, createUser, TestUser } from '../support/identity';
import { LogCapture } from '../support/log-capture';
import { CARDS, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';
import { publishedEvent } from '../support/ticketed-events';

/** Input no validator should ever see: absurd nesting, ill-formed UTF-16. Always 400, never 500. */
describe('bad input', () => {
  let t: TestApp;
  let superuser: TestUser;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await startTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: logs });
    superuser = await createUser(t, { superuser: true });
  });
  afterAll(() => t.close());

  const json = (rawBody: string) => ({ rawBody, headers: { 'content-type': 'application/json' } });
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  describe('deeply nested JSON', () => {
    it.each([
      ['an array 3,600 levels deep', nested(3600)],
      ['objects 65 levels deep', '{"a":'.repeat(65) + '1' + '}'.repeat(65)],
      ['a 1 MB body of brackets', nested(512 * 1024 - 1)],
    ])('refuses %s with 400 invalid_json, before authentication', async (_name, body) => {
      for (const path of ['/user/login/', '/sellers/', '/user/register']) {
        const res = await t.http.post(path, undefined, json(body));
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({
          statusCode: 400,
          code: 'invalid_json',
          message: 'The request body nests arrays and objects deeper than 64 levels.',
          request_id: expect.any(String),
        });
      }
    });

    it('takes nesting of 64 levels to validation as usual', async () => {
      const body = `{"email": "a@b.co", "password": ${nested(63)}}`;
      const res = await t.http.post('/user/login/', undefined, json(body));
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors.password).toBeDefined();
    });

    it('logs no stack for it', async () => {
      const res = await t.http.post('/user/login/', undefined, json(nested(5000)));
      const lines = logs.lines.filter((l) => l.includes(res.body.request_id));
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toMatch(/"stack"|RangeError/);
    });
  });

  describe('an object of very many fields', () => {
    it('refuses it with 400 and its path on public and authenticated routes, answering with one message', async () => {
      const fields = Object.fromEntries(Array.from({ length: 90_000 }, (_, i) => [`k${i}`, 1]));
      const register = await t.http.post('/user/register/', {
        email: 'wide@x.example',
        password: 'password123',
        ...fields,
      });
      expect(register.status).toBe(400);
      expect(register.body.errors).toEqual({ body: ['has 90002 fields; at most 1000 are taken'] });
      const seller = await t.http.post(
        '/sellers/',
        { name: 'Wide', document: '11144477735', email: 'w@x.example', split_participants: fields },
        { token: superuser.access },
      );
      expect(seller.status).toBe(400);
      expect(seller.body.errors).toEqual({ split_participants: ['has 90000 fields; at most 1000 are taken'] });
      expect((await t.http.get('/user/me', { token: superuser.access })).status).toBe(200);
    });
  });

  describe('an array of very many items', () => {
    it('refuses it with 400 and its path before any item is checked, on the public checkout too', async () => {
      const seller = await payingSeller(t, superuser);
      const event = await publishedEvent(t.http, superuser.access, seller.sellerId);
      // 300,000 empty objects (879 KB): checked one by one, they held the event loop for 13 s.
      const items = `[${Array(300_000).fill('{}').join(',')}]`;
      const buyer = '{"name":"B","email":"b@example.com","document":"52998224725"}';
      const res = await t.http.post(
        `/event/event/${event.id}/checkout/`,
        undefined,
        json(`{"buyer":${buyer},"items":${items},"payment":{"type":"pix"}}`),
      );
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual({ items: ['has 300000 items; at most 100 are taken'] });
      expect(res.text.length).toBeLessThan(1_000);
      // Arrays of a size every DTO takes, nested deep enough, are refused by their count of values.
      const wide = JSON.stringify({ name: 'W', ticket_types: Array.from({ length: 100 }, () => Array(30).fill({})) });
      const event2 = await t.http.post('/event/event/', undefined, {
        ...json(wide),
        token: superuser.access,
      });
      expect(event2.status).toBe(400);
      expect(event2.body.errors).toEqual({
        body: ['holds more than 2000 values (fields and array items, at any depth); at most 2000 are taken'],
      });
    });
  });

  describe('names with control characters or direction overrides', () => {
    it.each([
      ['an escape sequence and a bell', 'Eve\u001b[2J\u0007'],
      ['a line break', 'Eve\nBcc: x'],
      ['a right-to-left override', 'Eve\u202egpj.exe'],
    ])('refuses %s in every one-line name, with its path, writing nothing', async (_what, name) => {
      const message = 'must be one line of text, without control characters';
      const seller = await payingSeller(t, superuser);
      const sellers = Number((await t.db.query('SELECT count(*) FROM sellers')).rows[0].count);
      const cases: Array<[string, object, string]> = [
        ['/user/register/', { email: 'eve@x.example', password: 'password123', name }, 'name'],
        ['/sellers/', { name, document: '11144477735', email: 'eve@x.example' }, 'name'],
        [`/sellers/${seller.sellerId}/subaccounts/`, { name }, 'name'],
        [`/integrations/apikeys/${seller.sellerId}/apikeys/`, { label: name, description: '' }, 'label'],
        [
          `/unified/accounts/sellers/${seller.sellerId}/transactions/`,
          { amount: '10.00', payment_type: 'credit', card: { ...CARDS.visa, holder_name: name } },
          'card.holder_name',
        ],
        [
          `/unified/accounts/sellers/${seller.sellerId}/transactions/`,
          { amount: '10.00', payment_type: 'pix', customer: { name, email: 'eve@x.example' } },
          'customer.name',
        ],
      ];
      for (const [path, body, field] of cases) {
        const res = await t.http.post(path, body, { token: path.startsWith('/user/') ? undefined : superuser.access });
        expect({ path, status: res.status, errors: res.body.errors }).toEqual({
          path,
          status: 400,
          errors: { [field]: [message] },
        });
      }
      expect(Number((await t.db.query('SELECT count(*) FROM sellers')).rows[0].count)).toBe(sellers);
      expect((await t.db.query('SELECT 1 FROM users WHERE email = $1', ['eve@x.example'])).rowCount).toBe(0);
    });
  });

  describe('ill-formed UTF-16 (lone surrogates)', () => {
    const lone = '\ud800@x.co';

    it('answers 400 with the field path on every form with an e-mail', async () => {
      const sellerId = await createSeller(t, superuser);
      const seller = await payingSeller(t, superuser);
      const cases: Array<[string, unknown, string, string | undefined]> = [
        ['/user/register', { email: lone, password: 'correct horse battery', name: 'X' }, 'email', undefined],
        ['/user/login', { email: lone, password: 'x' }, 'email', undefined],
        ['/user/passwordrecovery', { email: lone }, 'email', undefined],
        [
          '/sellers/',
          { name: 'Loja', document: '11222333000181', email: lone, phone: '+5511999999999' },
          'email',
          superuser.access,
        ],
        [`/sellers/${sellerId}/accesses`, { email: lone, role: 'admin' }, 'email', superuser.access],
        [
          `/unified/accounts/sellers/${seller.sellerId}/transactions/`,
          { amount: '10.00', payment_type: 'pix', customer: { name: 'Ana', email: lone } },
          'customer.email',
          superuser.access,
        ],
      ];
      for (const [path, body, field, token] of cases) {
        const res = await t.http.post(path, body, { token });
        expect({ path, status: res.status, errors: res.body.errors }).toEqual({
          path,
          status: 400,
          errors: { [field]: ['must be well-formed Unicode (no lone surrogate code points)'] },
        });
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.request_id).toEqual(expect.any(String));
      }
    });

    it('answers 400 for a lone surrogate in a key', async () => {
      const key = await t.http.post('/user/login', undefined, json('{"email":"a@b.co","\\udc00":"x"}'));
      expect(key.status).toBe(400);
      expect(key.body.errors).toEqual({ '\udc00': ['must be well-formed Unicode (no lone surrogate code points)'] });
    });

    it('answers a path that is not percent-encoded UTF-8 (a lone surrogate) with 400 and the error body', async () => {
      const res = await t.http.get('/sellers/%ED%A0%80', { token: superuser.access });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        code: 'invalid_url',
        message: 'The request path is not valid percent-encoded UTF-8.',
        request_id: res.headers.get('x-request-id'),
      });
    });

    it('answers an unknown path 404 and another method 405, whatever its encoding', async () => {
      const unknown = await t.http.post('/event/event/%ED%BF%BF/tickets//checkin', undefined, {
        token: superuser.access,
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe('not_found');
      const otherMethod = await t.http.put('/sellers/%ED%A0%80', {}, { token: superuser.access });
      expect(otherMethod.status).toBe(405);
      expect(otherMethod.headers.get('allow')).toContain('GET');
    });

    it('answers a request Node cannot parse (a control character in a header) with the error body and X-Request-Id', async () => {
      for (const [request, says] of [
        ['POST /user/login/ HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\x01b\r\nContent-Length: 0\r\n\r\n', /header/],
        [
          'POST /user/login/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \x01abc\r\nContent-Length: 0\r\n\r\n',
          /header/,
        ],
        ['POST /user/login/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /chunked body/],
        ['FOO /user/login/ HTTP/1.1\r\nHost: x\r\n\r\n', /method/],
      ] as const) {
        const raw = await sendRaw(t.baseUrl, request);
        const [head, body] = raw.split('\r\n\r\n');
        expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
        const requestId = /\r\nX-Request-Id: ([0-9a-f-]{36})\r\n/i.exec(head)?.[1];
        expect(JSON.parse(body)).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          code: 'malformed_request',
          message: expect.stringMatching(says),
          request_id: requestId,
        });
      }
    });

    it('answers a URL too long for the parser 414 uri_too_long, headers too large 431, with the error body', async () => {
      const cases = [
        [`GET /sellers/?q=${'a'.repeat(30_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'uri_too_long'],
        [`GET /sellers/${'a'.repeat(20_000)}/ HTTP/1.1\r\nHost: x\r\n\r\n`, 414, 'uri_too_long'],
        [`GET /sellers/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
      ] as const;
      for (const [request, status, code] of cases) {
        const raw = await sendRaw(t.baseUrl, request);
        const [head, body] = raw.split('\r\n\r\n');
        expect({ status: Number(head.split(' ')[1]), code: JSON.parse(body).code }).toEqual({ status, code });
      }
    });

    it('answers a long path no route serves 404 with the path cut in the message', async () => {
      const res = await t.http.get(`/no-such/${'a'.repeat(10_000)}/`);
      expect(res.status).toBe(404);
      expect(res.body.message).toBe(`No route matches GET /no-such/${'a'.repeat(191)}….`);
    });

    it('answers a path with a % that starts no escape like one that is not UTF-8: 400, or 404/405 as the path says', async () => {
      const res = await t.http.get('/sellers/%ZZ/', { token: superuser.access });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_url');
      expect((await t.http.get('/sellers/%4/', { token: superuser.access })).body.code).toBe('invalid_url');
      expect((await t.http.put('/sellers/%ZZ', {}, { token: superuser.access })).status).toBe(405);
      expect((await t.http.get('/no-such/%ZZ/', { token: superuser.access })).status).toBe(404);
      expect((await t.http.get('/sellers/%7a/', { token: superuser.access })).body.code).toBe('seller_not_found');
    });

    it('answers a JSON body that is not UTF-8 with 400 invalid_json, never with replaced characters', async () => {
      const body = Buffer.concat([Buffer.from('{"email":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('@b.co"}')]);
      const res = await t.http.post('/user/login/', undefined, {
        rawBody: body,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_json', message: 'The request body is not valid UTF-8.' });
    });

    it('answers a compressed body (Content-Encoding) with 415: it would be read as plain text', async () => {
      const res = await t.http.post('/user/login/', undefined, {
        ...json('{"email":"a@b.co","password":"x"}'),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({
        code: 'unsupported_media_type',
        message: 'Unsupported Content-Encoding "gzip": send the body uncompressed.',
      });
      const identity = await t.http.post('/user/login/', undefined, {
        ...json('{"email":"a@b.co","password":"a password"}'),
        headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      });
      expect(identity.status).toBe(401);
    });

    it('keeps percent sequences of the query that are not UTF-8 as they were sent (well-formed text)', async () => {
      const res = await t.http.get('/plans/plans/rates?search=a%ED%A0%80', { token: superuser.access });
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual([]);
    });
  });

  describe('a JSON body that is not an object', () => {
    it('is refused with 400 and the path "body", also where every field is optional', async () => {
      const user = await createUser(t);
      for (const raw of ['null', '5', '"x"', 'true', '[]', '[{"name": "A"}]']) {
        const patched = await t.http.patch(`/users/${user.id}/`, undefined, { ...json(raw), token: superuser.access });
        expect([raw, patched.status, patched.body.errors]).toEqual([raw, 400, { body: ['must be an object'] }]);
      }
      const login = await t.http.post('/user/login/', undefined, json('null'));
      expect(login.status).toBe(400);
      expect(login.body.errors).toEqual({ body: ['must be an object'] });
    });

    it('no body at all is refused where the document requires one, and taken where it is optional', async () => {
      const seller = await payingSeller(t, superuser);
      const patched = await t.http.patch(`/sellers/${seller.sellerId}/`, undefined, { token: superuser.access });
      expect(patched.status).toBe(400);
      expect(patched.body.errors).toEqual({ body: ['is required'] });
      const charges = `/unified/accounts/sellers/${seller.sellerId}/transactions/`;
      const charge = await t.http.post(charges, undefined, { token: superuser.access });
      expect(charge.body.errors).toEqual({ body: ['is required'] });
      // A void's body is optional (API.md): none at all voids with no reason.
      const approved = await t.http.post(
        charges,
        { amount: '5.00', payment_type: 'credit', card: CARDS.visa },
        { token: superuser.access },
      );
      expect(approved.body.status).toBe('approved');
      const voided = await t.http.post(`${charges}${approved.body.id}/void/`, undefined, { token: superuser.access });
      expect(voided.status).toBe(200);
      expect(voided.body.status).toBe('voided');
    });
  });

  describe('fields named like members every object inherits (toString, constructor…)', () => {
    it('refuses them as unknown fields, with the path, in a body, a nested object, a map and a query', async () => {
      const login = await t.http.post(
        '/user/login/',
        undefined,
        json('{"email": "a@b.co", "password": "correct horse battery", "toString": ""}'),
      );
      expect(login.status).toBe(400);
      expect(login.body).toMatchObject({ code: 'validation_failed', errors: { toString: ['should not exist'] } });

      const seller = await payingSeller(t, superuser);
      const charges = `/unified/accounts/sellers/${seller.sellerId}/transactions/`;
      const charge = await t.http.post(charges, undefined, {
        rawBody: '{"amount": "1.00", "payment_type": "pix", "customer": {"name": "Ana", "constructor": "x"}}',
        headers: { 'content-type': 'application/json' },
        token: superuser.access,
      });
      expect(charge.status).toBe(400);
      expect(charge.body.errors).toEqual({ 'customer.constructor': ['should not exist'] });
      const listed = await t.http.get(charges, { token: superuser.access });
      expect(listed.body.results).toEqual([]); // nothing was written

      // A split participant so named would have been dropped from the map without a word.
      const patched = await t.http.patch(`/sellers/${seller.sellerId}/`, undefined, {
        rawBody: '{"split_participants": {"valueOf": "x"}}',
        headers: { 'content-type': 'application/json' },
        token: superuser.access,
      });
      expect(patched.status).toBe(400);
      expect(patched.body.errors).toEqual({ 'split_participants.valueOf': ['should not exist'] });

      // `__proto__` and `constructor.prototype` are refused by the JSON parser itself: the same
      // answer, not "invalid JSON" (the body is valid JSON).
      for (const [raw, path] of [
        ['{"email": "a@b.co", "password": "correct horse battery", "__proto__": "x"}', '__proto__'],
        ['{"email": "a@b.co", "password": "correct horse battery", "__proto__": {"admin": true}}', '__proto__'],
        ['{"email": "a@b.co", "password": "correct horse battery", "constructor": {"prototype": {}}}', 'constructor'],
      ]) {
        const res = await t.http.post('/user/login/', undefined, json(raw));
        expect({ raw, status: res.status, body: res.body }).toMatchObject({
          raw,
          status: 400,
          body: { code: 'validation_failed', errors: { [path]: ['should not exist'] } },
        });
      }
      const nested = await t.http.patch(`/sellers/${seller.sellerId}/`, undefined, {
        rawBody: '{"split_participants": {"__proto__": "x"}}',
        headers: { 'content-type': 'application/json' },
        token: superuser.access,
      });
      expect(nested.body).toMatchObject({
        code: 'validation_failed',
        errors: { 'split_participants.__proto__': ['should not exist'] },
      });

      const query = await t.http.get(`${charges}?hasOwnProperty=1`, { token: superuser.access });
      expect(query.status).toBe(400);
      expect(query.body.errors).toEqual({ hasOwnProperty: ['should not exist'] });
    });
  });

  describe('an array where an object belongs', () => {
    it('is refused with 400 and the path, and nothing is written (a card as an array answered 500)', async () => {
      const seller = await payingSeller(t, superuser);
      const charges = `/unified/accounts/sellers/${seller.sellerId}/transactions/`;
      const card = { number: '4111111111111111', holder_name: 'ANA', exp_month: 12, exp_year: 2031, cvv: '123' };
      for (const [body, field] of [
        [{ amount: '1.00', payment_type: 'credit', card: [] }, 'card'],
        [{ amount: '1.00', payment_type: 'credit', card: [card] }, 'card'],
        [{ amount: '1.00', payment_type: 'pix', customer: [] }, 'customer'],
      ] as const) {
        const res = await t.http.post(charges, body, { token: superuser.access });
        expect({ body, status: res.status, errors: res.body.errors }).toEqual({
          body,
          status: 400,
          errors: { [field]: ['must be an object'] },
        });
      }
      expect((await t.http.get(charges, { token: superuser.access })).body.results).toEqual([]);
    });
  });
});

/** Writes `request` as it is on a new connection to the service and answers all it reads back. */
function sendRaw(baseUrl: string, request: string): Promise<string> {
  const { port, hostname } = new URL(baseUrl);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
