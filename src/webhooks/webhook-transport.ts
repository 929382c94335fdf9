import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { AttemptResult, RESPONSE_BODY_LIMIT_BYTES } from './delivery-policy';
import { refusedAddressReason, refusedResolution } from './url-safety';

/** Resolves a host name to its addresses (the system resolver in production; a port for tests). */
export type ResolveHost = (host: string) => Promise<string[]>;

export const systemResolver: ResolveHost = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export class AddressNotAllowedError extends Error {
  readonly code = 'WEBHOOK_ADDRESS_NOT_ALLOWED';
}

export interface TransportOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Sockets at most per origin (scheme, host and port), which several endpoints may share. */
  connectionsPerOrigin: number;
  resolve?: ResolveHost;
}

export type SendResult = AttemptResult & { durationMs: number; responseBody: string | null };

/**
 * Sends webhook requests through one pool of sockets (undici), checking every address a
 * connection is made to: the host name is resolved here, each address is classified, and the
 * socket connects to the checked address while keeping the original Host header and TLS SNI
 * (the connector resolves through `lookup`, so a DNS answer cannot change between check and
 * connect). After connecting, the peer address is checked once more. Redirects are not
 * followed; the whole request is bounded by the timeout.
 */
export class WebhookTransport {
  private readonly agent: Agent;

  constructor(private readonly options: TransportOptions) {
    const resolve = options.resolve ?? systemResolver;
    const allowPrivate = options.allowPrivate;
    const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
      resolve(hostname).then(
        (addresses) => {
          const refused = allowPrivate
            ? addresses.length
              ? null
              : `${hostname} does not resolve`
            : refusedResolution(hostname, addresses);
          if (refused) return callback(new AddressNotAllowedError(`Address not allowed: ${refused}`), '', 4);
          const family = (a: string) => (isIP(a) === 6 ? 6 : 4);
          if (lookupOptions.all) {
            callback(null, addresses.map((address) => ({ address, family: family(address) })) as never, 4);
          } else {
            callback(null, addresses[0], family(addresses[0]));
          }
        },
        (error: Error) =>
          callback(Object.assign(error, { message: `DNS lookup of ${hostname} failed: ${error.message}` }), '', 4),
      );
    };
    const base = buildConnector({ timeout: options.timeoutMs, lookup } as buildConnector.BuildOptions);
    const connect: buildConnector.connector = (connectOptions, callback) => {
      const host = connectOptions.hostname.replace(/^\[|\]$/g, '');
      const literalRefused = !allowPrivate && isIP(host) ? refusedAddressReason(host) : null;
      if (literalRefused) {
        return callback(new AddressNotAllowedError(`Address not allowed: ${host} is ${literalRefused}`), null);
      }
      base(connectOptions, (error, socket) => {
        if (error || !socket) return callback(error, null);
        const peer = (socket as Socket).remoteAddress;
        const peerRefused = allowPrivate ? null : peer ? refusedAddressReason(peer) : 'an unknown address';
        if (peerRefused) {
          socket.destroy();
          return callback(
            new AddressNotAllowedError(`Address not allowed: connected to ${peerRefused} (${peer})`),
            null,
          );
        }
        callback(null, socket);
      });
    };
    this.agent = new Agent({
      connect,
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** POSTs one webhook; never throws: failures come back as `{kind: 'error'}`. */
  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'SellerPayments-Webhooks/1.0', ...headers },
        body,
        dispatcher: this.agent,
        signal,
      });
      const responseBody = await readCapped(response.body);
      const retryAfter = response.headers['retry-after'];
      return {
        kind: 'response',
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
        responseBody,
        durationMs: elapsed(),
      };
    } catch (error) {
      return {
        kind: 'error',
        message: describeError(error, signal, this.options.timeoutMs),
        responseBody: null,
        durationMs: elapsed(),
      };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** The first 1 KiB of a response body as text; the rest is read and dropped (up to 64 KiB), then the socket is let go. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  for await (const chunk of body) {
    if (keptBytes < RESPONSE_BODY_LIMIT_BYTES) {
      const part = chunk.subarray(0, RESPONSE_BODY_LIMIT_BYTES - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    total += chunk.length;
    if (total > 64 * 1024) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(kept)
    .toString('utf8')
    .replaceAll('\u0000', '')
    .replace(/\uFFFD$/, '');
}

function describeError(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    signal.aborted ||
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `Timed out after ${timeoutMs / 1000} s`;
  }
  const cause = (e.cause as { code?: string; message?: string } | undefined) ?? e;
  if (error instanceof AddressNotAllowedError || cause instanceof AddressNotAllowedError)
    return (cause as Error).message;
  switch (cause.code ?? e.code) {
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'Connection reset by the receiver';
    case 'ECONNREFUSED':
      return 'Connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Host not found: ${cause.message ?? e.message}`;
    default:
      return `${cause.code ?? e.code ?? e.name ?? 'Error'}: ${cause.message ?? e.message ?? String(error)}`;
  }
}
