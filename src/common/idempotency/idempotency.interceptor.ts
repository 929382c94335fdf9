import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable, catchError, from, mergeMap, of, throwError } from 'rxjs';
import { AuthorizationService } from '../../auth/authorization.service';
import type { Principal } from '../../auth/principal';
import { SellerAuthorization, sellersAuthorizedOf } from '../context/request-context';
import { BadRequestError, SecretNotReplayableError, ValidationError } from '../errors/api-error';
import { toErrorResponse } from '../errors/error-response';
import { IdempotencyRepository, KeyRef } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { IDEMPOTENT, IdempotentOptions } from './idempotent.decorator';
import { attachClaim, claimLapsed, IdempotencyClaim } from './request-transaction';

const HEADER = 'idempotency-key';

/**
 * The request's Idempotency-Key, or what is wrong with it: 1 to 255 characters, no control
 * characters, sent once (HTTP joins repeated headers with ", ": two keys would become a third).
 */
function checkKey(
  value: string | string[],
  rawHeaders: string[],
): { ok: true; value: string } | { ok: false; message: string } {
  let sent = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === HEADER) sent++;
  if (typeof value !== 'string' || sent > 1)
    return { ok: false, message: 'Send the Idempotency-Key header once, with one key.' };
  if (value.length < 1 || value.length > 255) {
    return { ok: false, message: 'The Idempotency-Key header must be 1 to 255 characters.' };
  }
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(value)) {
    return { ok: false, message: 'The Idempotency-Key header must not contain control characters.' };
  }
  return { ok: true, value };
}

/**
 * Whom a key belongs to: the user, the API key's seller (every key of a seller shares its
 * keys), or for public routes the client address and the route.
 */
export function idempotencyOwner(request: FastifyRequest): string {
  const principal = (request as FastifyRequest & { user?: Principal }).user;
  if (principal?.kind === 'user') return `user:${principal.id}`;
  if (principal?.kind === 'api_key') return `seller:${principal.sellerId}`;
  return `public:${request.ip} ${request.method} ${request.routeOptions.url ?? ''}`;
}

/**
 * Applies `@Idempotent()`: claims the key, replays a finished request, and puts the claim in
 * the request's context so the service's `requestTransaction` records the answer with the
 * change. For a handler that did not (or whose change failed), it records the answer or frees
 * the key itself afterwards.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly idempotency: IdempotencyService,
    private readonly keys: IdempotencyRepository,
    private readonly authorization: AuthorizationService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const options = this.reflector.get<IdempotentOptions | undefined>(IDEMPOTENT, context.getHandler());
    if (!options) return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const header = request.headers[HEADER];
    if (header === undefined) return next.handle();
    const checked = checkKey(header, request.raw.rawHeaders);
    if (!checked.ok) return throwError(() => new BadRequestError('invalid_idempotency_key', checked.message));
    const key = checked.value;
    const successStatus =
      this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ??
      (request.method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK);
    const recorded = (body: unknown) => (options.secret ? { id: (body as { id: string }).id } : toJson(body));

    const begin = this.idempotency.begin(idempotencyOwner(request), key, {
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      params: (request.params ?? {}) as Record<string, string>,
      body: request.body,
    });
    return from(begin).pipe(
      mergeMap(async (begun) => {
        if (begun.kind === 'replay') await this.checkAgain(request, begun.sellerChecks);
        return begun;
      }),
      mergeMap((begun) => {
        if (begun.kind === 'replay') {
          reply.header('idempotent-replayed', 'true');
          if (options.secret && begun.status < 400) {
            return throwError(() => new SecretNotReplayableError((begun.body as { id: string }).id));
          }
          // The first answer as it was sent, status and body: a refusal's body keeps its request_id.
          reply.status(begun.status);
          return of(begun.body);
        }
        const ref = begun.ref;
        const claim: IdempotencyClaim = {
          resumeOf: begun.resumeOf,
          answered: false,
          provisional: false,
          answer: async (manager, body) => {
            if (!(await this.keys.complete(ref, answerOf(request, successStatus, recorded(body)), manager))) {
              throw claimLapsed();
            }
          },
          tie: async (manager, resourceId) => {
            if (!(await this.keys.tie(manager, ref, resourceId))) throw claimLapsed();
          },
        };
        attachClaim(request, claim);
        return next.handle().pipe(
          mergeMap(async (body) => {
            if (claim.provisional) await this.keys.release(ref);
            else if (!claim.answered) await this.keys.complete(ref, answerOf(request, successStatus, recorded(body)));
            return body;
          }),
          catchError((error: unknown) => from(this.settleFailure(claim, ref, error, request))),
        );
      }),
    );
  }

  /**
   * A client error is the request's answer and is kept; a server failure frees the key for a
   * retry, and so does a request refused as invalid (400 `validation_failed`) or for the caller's
   * rights (401, 403, wherever raised): nothing began, and the corrected request, or the same one
   * once the caller has the right, may come back with the same key.
   */
  private async settleFailure(
    claim: IdempotencyClaim,
    ref: KeyRef,
    error: unknown,
    request: FastifyRequest,
  ): Promise<never> {
    if (!claim.answered) {
      const response = toErrorResponse(error, String(request.id));
      const freed =
        response.status >= 500 ||
        response.status === 401 ||
        response.status === 403 ||
        claim.provisional ||
        error instanceof ValidationError;
      if (freed) await this.keys.release(ref).catch(() => undefined);
      else await this.keys.complete(ref, answerOf(request, response.status, response.body)).catch(() => undefined);
    }
    throw error;
  }

  /**
   * Before a replay: the checks on a seller the first request passed (a seller named in its body
   * or found from a record; the guard has checked the route's own again), made again. A caller
   * that lost the access or the permission since gets today's refusal, not the recorded answer.
   */
  private async checkAgain(request: FastifyRequest, checks: SellerAuthorization[]): Promise<void> {
    const principal = (request as FastifyRequest & { user?: Principal }).user;
    if (!principal) return; // a public route's key: no seller was checked
    for (const { seller, ...check } of checks) await this.authorization.authorizeSeller(principal, seller, check);
  }
}

/** The answer recorded for a key: the response, and the checks on a seller the request passed. */
function answerOf(request: FastifyRequest, status: number, body: unknown) {
  return { status, body, sellerChecks: sellersAuthorizedOf(request) };
}

function toJson(body: unknown): unknown {
  return body === undefined ? null : JSON.parse(JSON.stringify(body));
}
