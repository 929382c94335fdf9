import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { contractChecker } from './contract';

export interface ReceivedWebhook {
  /** The request's path (with its query), e.g. `/webhooks`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; created_at: string; data: any };
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** What the receiver does with one request: answer, hang (never answer) or reset the connection. */
export type Reply =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang' | 'reset';

/**
 * A real HTTP server on loopback that receives webhooks, as a seller's backend would. Its
 * answer to each request is programmable (status, Retry-After, redirects, hanging, resets).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  /** What the requests received break of openapi.json's `webhooks`; waitFor and stop throw them. */
  private readonly contractProblems: string[] = [];
  port = 0;
  /** TCP connections accepted so far. */
  connections = 0;

  constructor(public reply: (request: ReceivedWebhook, index: number) => Reply = () => ({ status: 204 })) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: ReceivedWebhook['json'];
        try {
          json = JSON.parse(body);
        } catch {
          json = { id: '', type: '', created_at: '', data: null };
        }
        const request = { path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
        // Every request the service sends must be one the document's `webhooks` describe.
        this.contractProblems.push(...contractChecker().checkWebhook(req.headers, body));
        const index = this.received.push(request) - 1;
        const reply = this.reply(request, index);
        if (reply === 'hang') {
          this.hanging.add(res);
          return;
        }
        if (reply === 'reset') {
          req.socket.destroy();
          return;
        }
        const answer = () => {
          res.writeHead(reply.status, reply.headers ?? {});
          res.end(reply.body ?? '');
        };
        if (reply.delayMs) setTimeout(answer, reply.delayMs);
        else answer();
      });
    });
    this.server.on('connection', (socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/webhooks`;
  }

  /** Requests received for one event id (its retries included). */
  forEvent(eventId: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.headers['webhook-id'] === eventId);
  }

  /** Waits until `count` requests match `predicate` (all requests by default), up to `timeoutMs`. */
  async waitFor(
    count: number,
    predicate: (r: ReceivedWebhook) => boolean = () => true,
    timeoutMs = 20_000,
  ): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.throwContractProblems();
      const matching = this.received.filter(predicate);
      if (matching.length >= count) return matching;
      if (Date.now() > deadline) {
        throw new Error(`receiver got ${matching.length} of ${count} expected webhooks within ${timeoutMs} ms`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.throwContractProblems();
  }

  private throwContractProblems(): void {
    if (this.contractProblems.length === 0) return;
    const problems = this.contractProblems.splice(0);
    throw new Error(
      `A webhook does not match openapi.json (fix the server or the document):\n- ${problems.join('\n- ')}`,
    );
  }
}

/** Polls `check` until it answers something truthy (up to `timeoutMs`); answers that value. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
