import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { isUUID } from 'class-validator';
import { AuthGuard, IAuthGuard } from '@nestjs/passport';
import { ForbiddenError, UnauthorizedError } from '../common/errors/api-error';
import { ACCESS_RULE, AccessRule } from './access.decorators';
import { AuthorizationService } from './authorization.service';
import type { AuthenticatedRequest } from './principal';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Passport's guard for one strategy, answering failures with the service's 401. */
function strategyGuard(strategy: string): IAuthGuard {
  class StrategyGuard extends AuthGuard(strategy) {
    override handleRequest<T>(error: unknown, user: T, info: unknown): T {
      // A failure inside the strategy (an API error, an unreachable database) keeps its meaning.
      if (error) throw error;
      if (!user) {
        const name = (info as Error | undefined)?.name;
        if (name === 'TokenExpiredError') throw new UnauthorizedError('token_expired', 'The token has expired.');
        throw new UnauthorizedError('invalid_token', 'The token is not valid.');
      }
      return user;
    }
  }
  return new StrategyGuard();
}

/**
 * The global, default-deny guard. A route states its access with `@Public()` or
 * `@Authenticated(...)`; a route with neither is refused. The credential is chosen by the
 * token's shape: a JWT goes to the `jwt` strategy, a UUID to the `api-key` strategy,
 * anything else is 401. Then the route's rule: credential kind, superuser, and the seller
 * and permission from the access table.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly jwt = strategyGuard('jwt');
  private readonly apiKey = strategyGuard('api-key');

  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(AuthorizationService) private readonly authorization: AuthorizationService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!rule) throw new ForbiddenError('access_not_declared', 'This route declares no access rule, so it is closed.');
    if (rule.public) return true;

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const header = request.headers.authorization;
    if (!header) throw new UnauthorizedError('not_authenticated', 'Send a bearer token in the Authorization header.');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthorizedError('invalid_token', 'The Authorization header must be "Bearer <token>".');
    const token = match[1];
    if (rule.handlerVerifiedToken?.test(token)) return true;
    if (rule.seller) {
      // The JWT strategy reads the user's access to this seller along with the user.
      const sellerId = (request.params as Record<string, string>)[rule.seller];
      if (isUUID(sellerId)) request.routeSellerId = sellerId;
    }
    if (JWT_SHAPE.test(token)) await this.jwt.canActivate(context);
    else if (UUID_SHAPE.test(token)) await this.apiKey.canActivate(context);
    else throw new UnauthorizedError('invalid_token', 'The bearer token is neither a JWT nor an API key.');

    const principal = request.user;
    if (principal.kind === 'api_key' && rule.credentials === 'jwt') {
      throw new ForbiddenError('api_key_not_allowed', 'API keys cannot be used on this route; use a user token.');
    }
    if (principal.kind === 'user' && rule.credentials === 'api_key') {
      throw new ForbiddenError('jwt_not_allowed', 'This route takes a seller API key, not a user token.');
    }
    if (rule.superuser) this.authorization.requireSuperuser(principal);
    if (rule.seller) {
      const params = request.params as Record<string, string>;
      await this.authorization.authorizeSeller(principal, params[rule.seller], rule);
    }
    return true;
  }
}
