import { ExecutionContext, Injectable, SetMetadata, UseGuards, applyDecorators } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail, ThrottlerOptions } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { ApiErrorResponses } from '../../openapi/api-error-responses.decorator';

/**
 * The rate limits of API.md sections 2 and 10, each keyed by what it protects (`by`; null: the
 * request has nothing to key it by, and validation refuses it: it is not counted, and answered
 * 400, not 429). `anonymousOnly`: the limit of the public routes, not counted for a seller's own
 * credential (a JWT or an API key) on a route both may call (a subscription's cancel).
 */
const LIMITS: Record<
  'login' | 'password_recovery' | 'password_recovery_confirm' | 'public_checkout',
  { limit: number; ttl: number; by: (r: FastifyRequest) => string | null; anonymousOnly?: boolean }
> = {
  login: { limit: 10, ttl: 60_000, by: (r) => `${r.ip}|${emailOf(r) ?? ''}` },
  password_recovery: { limit: 5, ttl: 3_600_000, by: (r) => emailOf(r) },
  password_recovery_confirm: { limit: 10, ttl: 60_000, by: (r) => r.ip },
  public_checkout: { limit: 30, ttl: 60_000, by: (r) => r.ip, anonymousOnly: true },
};

export type RateLimitName = keyof typeof LIMITS;
const RATE_LIMIT = Symbol('rate_limit');

/**
 * Applies one of the named rate limits to a route (429 with Retry-After past it). The guard is
 * bound here, not globally, so routes without a limit do not pay for its checks.
 */
export function RateLimit(name: RateLimitName): MethodDecorator {
  return applyDecorators(SetMetadata(RATE_LIMIT, name), UseGuards(RateLimitGuard), ApiErrorResponses(429));
}

export function rateLimitThrottlers(): ThrottlerOptions[] {
  return (Object.keys(LIMITS) as RateLimitName[]).map((name) => ({
    name,
    limit: LIMITS[name].limit,
    ttl: LIMITS[name].ttl,
    setHeaders: false,
    skipIf: (context: ExecutionContext) =>
      Reflect.getMetadata(RATE_LIMIT, context.getHandler()) !== name ||
      LIMITS[name].by(context.switchToHttp().getRequest<FastifyRequest>()) === null ||
      // Route guards run after the global AccessGuard: `user` is the authenticated principal.
      (LIMITS[name].anonymousOnly === true &&
        context.switchToHttp().getRequest<{ user?: unknown }>().user !== undefined),
    getTracker: (req: Record<string, unknown>) => LIMITS[name].by(req as unknown as FastifyRequest)!,
  }));
}

@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override async throwThrottlingException(
    _context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const seconds = Math.max(1, detail.timeToBlockExpire);
    throw new ApiError(429, 'rate_limited', `Too many requests. Try again in ${seconds} seconds.`, undefined, {
      'retry-after': String(seconds),
    });
  }
}

/** The e-mail of the body, as accounts are keyed; null when there is none to key by. */
function emailOf(request: FastifyRequest): string | null {
  const email = (request.body as { email?: unknown } | undefined)?.email;
  const key = typeof email === 'string' ? email.trim().toLowerCase() : '';
  return key === '' ? null : key;
}
