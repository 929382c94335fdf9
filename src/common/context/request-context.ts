import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';
import type { SellerCheck } from '../../auth/authorization.service';
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
  /** The seller the request acts on, once authorization has established it. */
  sellerId?: string;
  /** The checks on a seller this request passed (see noteSellerAuthorized). */
  sellersAuthorized?: SellerAuthorization[];
}

/** A check on a seller that a request passed (AuthorizationService.authorizeSeller). */
export type SellerAuthorization = SellerCheck & { seller: string };

const storage = new AsyncLocalStorage<RequestContext>();
/** The context of a request, on the request itself (read after the context has ended: sellersAuthorizedOf). */
const CONTEXT = Symbol('requestContext');
type ContextCarrier = FastifyRequest & { [CONTEXT]?: RequestContext };

export function runInRequestContext<T>(context: RequestContext, fn: () => T): T {
  (context.request as ContextCarrier)[CONTEXT] = context;
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

/** Records the seller the current request acts on (log lines carry it from then on). */
export function noteRequestSeller(sellerId: string): void {
  const context = storage.getStore();
  if (context) context.sellerId = sellerId.toLowerCase();
}

/**
 * Records a check on a seller the current request passed. A replay of the request's
 * Idempotency-Key passes the same checks again first: a caller that has lost the access since
 * gets today's refusal, not the answer it was given then.
 */
export function noteSellerAuthorized(check: SellerAuthorization): void {
  const context = storage.getStore();
  if (!context) return;
  const passed = (context.sellersAuthorized ??= []);
  if (!passed.some((p) => p.seller === check.seller && p.permission === check.permission)) passed.push(check);
}

/** The checks on a seller `request` passed (see noteSellerAuthorized). */
export function sellersAuthorizedOf(request: FastifyRequest): SellerAuthorization[] {
  return (request as ContextCarrier)[CONTEXT]?.sellersAuthorized ?? [];
}

/**
 * What every log line written while serving a request carries: its id and, once known, the
 * credential (user or API key) and the seller it acts on.
 */
export function requestLogFields(context = storage.getStore()): Record<string, string> {
  if (!context) return {};
  const fields: Record<string, string> = { request_id: context.requestId };
  const principal = (context.request as FastifyRequest & { user?: Principal }).user;
  if (principal) {
    fields.credential_id = principal.credentialId;
    if (principal.kind === 'user') fields.user_id = principal.id;
  }
  const seller = context.sellerId ?? (principal?.kind === 'api_key' ? principal.sellerId : undefined);
  if (seller) fields.seller_id = seller;
  return fields;
}

/** The same fields for a request whose handling is over (its completion line). */
export function requestLogFieldsOf(request: FastifyRequest): Record<string, string> {
  return requestLogFields((request as ContextCarrier)[CONTEXT]);
}
