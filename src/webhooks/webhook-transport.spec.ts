import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { WebhookTransport } from './webhook-transport';

/** The transport's connection checks, against a real loopback server and a fake resolver (the DNS port). */
describe('webhook transport', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  const seen: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(200).end('x'.repeat(5000)));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('connects to the resolved address with the original Host header, and keeps 1 KiB of the answer', async () => {
    const transport = new WebhookTransport({
      allowPrivate: true,
      timeoutMs: 2000,
      connectionsPerOrigin: 2,
      resolve: async (host) => (host === 'hooks.seller.test' ? ['127.0.0.1'] : []),
    });
    const result = await transport.send(`http://hooks.seller.test:${port}/in`, { 'webhook-id': 'msg_1' }, '{}');
    await transport.close();
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    expect(result.responseBody).toHaveLength(1024);
    expect(seen.at(-1)).toMatchObject({ host: `hooks.seller.test:${port}`, 'webhook-id': 'msg_1' });
  });

  it('checks the address at connect time: a DNS answer that changed to loopback never connects', async () => {
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    let lookups = 0;
    const resolve = async () => answers[Math.min(lookups++, 1)];
    // Registration looked the name up once (a public address); delivery resolves again.
    expect(await resolve()).toEqual(['93.184.216.34']);
    const transport = new WebhookTransport({ allowPrivate: false, timeoutMs: 2000, connectionsPerOrigin: 2, resolve });
    const before = connections;
    const result = await transport.send(`https://rebind.seller.test:${port}/in`, {}, '{}');
    await transport.close();
    expect(result.kind).toBe('error');
    expect(result.kind === 'error' && result.message).toBe(
      'Address not allowed: its host rebind.seller.test resolves to a loopback address (127.0.0.1)',
    );
    expect(lookups).toBe(2);
    expect(connections).toBe(before);
  });

  it('refuses a name with any refused address among its answers', async () => {
    const transport = new WebhookTransport({
      allowPrivate: false,
      timeoutMs: 2000,
      connectionsPerOrigin: 2,
      resolve: async () => ['93.184.216.34', '::ffff:10.0.0.1'],
    });
    const result = await transport.send('https://mixed.seller.test/in', {}, '{}');
    await transport.close();
    expect(result.kind === 'error' && result.message).toContain('a private address (IPv4-mapped)');
  });

  it('refuses address literals before connecting', async () => {
    const transport = new WebhookTransport({ allowPrivate: false, timeoutMs: 2000, connectionsPerOrigin: 2 });
    const before = connections;
    const result = await transport.send(`https://127.0.0.1:${port}/in`, {}, '{}');
    await transport.close();
    expect(result.kind === 'error' && result.message).toBe('Address not allowed: 127.0.0.1 is a loopback address');
    expect(connections).toBe(before);
  });
});
