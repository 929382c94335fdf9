import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Server } from 'node:net';
import type { Socket } from 'node:net';
import { ServiceUnavailableError } from '../errors/api-error';
import { toErrorResponse } from '../errors/error-response';

/** The listener closes once no connection has come for this long (the balancer has let go). */
const QUIET_MS = 250;
/** How long connections opened just before the listener closed get to deliver their request. */
const LATE_CONNECTION_GRACE_MS = 1000;
const POLL_MS = 20;

/**
 * A graceful stop of the HTTP side, before the database pool and the job queue close:
 *
 * 1. every new request (readiness included, liveness excepted) answers 503 `service_unavailable`
 *    with the error body, and every response from then on carries `Connection: close`, so that
 *    clients stop reusing their connections;
 * 2. requests already running finish, for at most the drain timeout; one still running then is
 *    answered 503 `service_unavailable` (its outcome unknown: retry with the same Idempotency-Key);
 * 3. the listener closes once no new connection has come for a moment (a load balancer that saw
 *    readiness fail has stopped sending; connections waiting in the kernel's accept queue when a
 *    listener closes are reset), or when the drain timeout is over;
 * 4. connections opened just before get a moment to deliver their request (answered 503), then
 *    whatever connection is left (idle, nothing sent) is closed.
 *
 * No connection is closed under a request, so clients see answers, not resets.
 */
export class RequestDrain {
  private draining = false;
  /** The responses of the requests running, with their request ids. */
  private readonly running = new Map<ServerResponse, string>();
  private readonly sockets = new Set<Socket>();
  private lastConnectionAt = 0;

  get isDraining(): boolean {
    return this.draining;
  }

  /** Registers the hooks; call before any other onRequest hook. */
  install(fastify: FastifyInstance): void {
    fastify.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      this.lastConnectionAt = Date.now();
      socket.once('close', () => this.sockets.delete(socket));
    });
    fastify.addHook('onRequest', async (request, reply) => {
      if (this.draining && request.url.split('?')[0].replace(/\/+$/, '') !== '/health/live') {
        const response = toErrorResponse(
          new ServiceUnavailableError('The service is shutting down. Retry the request.'),
          String(request.id),
        );
        return reply.status(response.status).headers(response.headers).send(response.body);
      }
      this.running.set(reply.raw, String(request.id));
      reply.raw.once('close', () => this.running.delete(reply.raw));
    });
    fastify.addHook('onSend', async (_request, reply) => {
      if (this.draining) reply.header('connection', 'close');
    });
  }

  /**
   * Stops taking work and waits for the running requests (at most `timeoutMs`). Resolves with
   * the number of requests still running when the time ran out (0 when all finished).
   */
  async drain(server: Server, timeoutMs: number): Promise<number> {
    this.draining = true;
    const deadline = Date.now() + timeoutMs;
    await waitUntil(() => this.running.size === 0, deadline);
    const unfinished = this.running.size;
    for (const [response, requestId] of this.running) answerCut(response, requestId);
    await waitUntil(() => Date.now() - this.lastConnectionAt >= QUIET_MS, deadline);
    // net.Server's close: stop accepting, without http.Server's closing of idle connections,
    // which would reset a connection whose request is on its way.
    Server.prototype.close.call(server);
    await waitUntil(() => this.sockets.size === 0, Date.now() + LATE_CONNECTION_GRACE_MS);
    for (const socket of this.sockets) socket.destroy();
    return unfinished;
  }
}

/**
 * A request still running when the drain time is up gets an answer before its connection
 * closes: 503 with the error body. What it did is unknown (it may have committed): a retry
 * with the same Idempotency-Key finds out.
 */
function answerCut(response: ServerResponse, requestId: string): void {
  if (response.headersSent) return;
  const { status, headers, body } = toErrorResponse(
    new ServiceUnavailableError(
      'The service stopped before this request finished; its outcome is unknown. Retry it with the same Idempotency-Key.',
    ),
    requestId,
  );
  const json = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'x-request-id': requestId,
    connection: 'close',
  });
  response.end(json);
}

async function waitUntil(condition: () => boolean, deadline: number): Promise<void> {
  while (!condition() && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
