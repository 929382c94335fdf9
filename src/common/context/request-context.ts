import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal';

/**
 * What code deep in a request (audit log, idempotency, logging) needs to know about the
 * request it serves, without passing it down every call: its id, the client address and,
 * once the guard has authenticated it, the principal. Entered by the Fastify preHandler hook
 * (after the body is parsed), so guards, interceptors, controllers and services all run in it.
 */
export interface RequestContext {
  readonly requestId: string;
  readonly ip: string;
  readonly request: FastifyRequest;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runInRequestContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The request being served, or undefined outside of one (jobs, CLI). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** The authenticated principal of the current request, once the guard has set it. */
export function currentPrincipal(): Principal | undefined {
  return (storage.getStore()?.request as (FastifyRequest & { user?: Principal }) | undefined)?.user;
}
