import Fastify from 'fastify';
import { FastJsonSerializers } from './fast-json';

const components = {
  schemas: {
    ThingDto: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        amount: { type: 'string' },
        note: { type: 'string', nullable: true },
        tags: { type: 'array', items: { $ref: '#/components/schemas/TagDto' } },
      },
    },
    TagDto: { type: 'object', properties: { name: { type: 'string' } } },
  },
};

async function serve(body: unknown, verify: boolean, status = 200) {
  const app = Fastify();
  const serializers = new FastJsonSerializers();
  serializers.hook(app);
  app.get('/thing', { config: { fastJson: 'ThingDto' } }, async (_request, reply) => reply.status(status).send(body));
  app.get('/plain', async () => body);
  serializers.load(components, ['ThingDto'], { verify });
  await app.ready();
  return app;
}

describe('FastJsonSerializers', () => {
  const thing = { id: 'a', amount: '1.00', note: null, tags: [{ name: 't' }] };

  it('writes a route success body with the serializer compiled from its schema', async () => {
    const app = await serve({ ...thing, secret: 'not in the schema' }, false);
    const res = await app.inject('/thing');
    expect(JSON.parse(res.body)).toEqual(thing); // the compiled serializer writes only what the schema names
    expect(JSON.parse((await app.inject('/plain')).body)).toEqual({ ...thing, secret: 'not in the schema' });
    await app.close();
  });

  it('leaves error bodies to JSON.stringify', async () => {
    const app = await serve({ statusCode: 400, code: 'bad', extra: 1 }, false, 400);
    expect(JSON.parse((await app.inject('/thing')).body)).toEqual({ statusCode: 400, code: 'bad', extra: 1 });
    await app.close();
  });

  it('with verify, answers 500 when the schema does not describe the body, and passes a body it does', async () => {
    const app = await serve({ ...thing, secret: 'x' }, true);
    expect((await app.inject('/thing')).statusCode).toBe(500);
    await app.close();
    const good = await serve(thing, true);
    const res = await good.inject('/thing');
    expect([res.statusCode, JSON.parse(res.body)]).toEqual([200, thing]);
    await good.close();
  });

  it('refuses at start-up a DTO the document does not have', () => {
    expect(() => new FastJsonSerializers().load(components, ['MissingDto'], { verify: false })).toThrow(/MissingDto/);
  });
});
