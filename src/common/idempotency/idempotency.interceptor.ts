import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Observable, catchError, from, mergeMap, of, throwError } from 'rxjs';
import { ApiError, BadRequestError } from '../errors/api-error';
import { ErrorBody, toErrorResponse } from '../errors/error-response';
import { IdempotencyScope, IdempotencyService } from './idempotency.service';
import { IDEMPOTENT } from './idempotent.decorator';

const HEADER = 'idempotency-key';

/** The credential a request acts with; the auth guard puts it on `request.user`. */
export function credentialScope(request: FastifyRequest): string {
  const user = (request as FastifyRequest & { user?: { credentialId?: string } }).user;
  return user?.credentialId ?? 'anonymous';
}

@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(IdempotencyService) private readonly store: IdempotencyService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (!this.reflector.get<boolean>(IDEMPOTENT, context.getHandler())) return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const key = request.headers[HEADER];
    if (key === undefined) return next.handle();
    if (typeof key !== 'string' || key.length < 1 || key.length > 255) {
      return throwError(
        () => new BadRequestError('invalid_idempotency_key', 'The Idempotency-Key header must be 1 to 255 characters.'),
      );
    }
    const id: IdempotencyScope = {
      scope: credentialScope(request),
      method: request.method,
      path: normalisePath(request.url),
      key,
    };
    const hash = this.store.hashBody(request.body);

    return from(this.store.begin(id, hash)).pipe(
      mergeMap((begun) => {
        if (begun.kind === 'replay') {
          reply.header('idempotent-replayed', 'true');
          if (begun.status >= 400) return throwError(() => replayedError(begun.status, begun.body as ErrorBody));
          return of(begun.body);
        }
        return next.handle().pipe(
          mergeMap(async (body) => {
            await this.store.complete(id, reply.statusCode, toJson(body));
            return body;
          }),
          catchError((error: unknown) => from(this.settleFailure(id, error, String(request.id)))),
        );
      }),
    );
  }

  /** A client error is the request's answer and is kept; a server failure frees the key for a retry. */
  private async settleFailure(id: IdempotencyScope, error: unknown, requestId: string): Promise<never> {
    const response = toErrorResponse(error, requestId);
    if (response.status >= 500) await this.store.release(id).catch(() => undefined);
    else await this.store.complete(id, response.status, response.body).catch(() => undefined);
    throw error;
  }
}

function replayedError(status: number, body: ErrorBody): ApiError {
  return new ApiError(status, body.code, body.message, body.errors);
}

function normalisePath(url: string): string {
  const path = url.split('?')[0].replace(/\/{2,}/g, '/');
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function toJson(body: unknown): unknown {
  return body === undefined ? null : JSON.parse(JSON.stringify(body));
}
