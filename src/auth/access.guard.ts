import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { noteRequestSeller } from '../common/context/request-context';
import { ForbiddenError, UnauthorizedError } from '../common/errors/api-error';
import { ACCESS_RULE, AccessRule } from './access.decorators';
import { bearerToken } from './bearer';
import { AuthenticationGuard } from './authentication.guard';
import { AuthorizationService } from './authorization.service';
import type { AuthenticatedRequest } from './principal';
import { isSessionOrKeyShaped } from './token-shape';

/**
 * The global, default-deny guard. A route states its access with `@Public()` or
 * `@Authenticated(...)`; a route with neither is refused. Otherwise the caller is
 * authenticated (AuthenticationGuard: the token's shape picks the strategy) and the route's
 * rule is decided in one place (AuthorizationService).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  /** The rule a handler or controller class declares (null: none): metadata is fixed once a class is defined. */
  private readonly rules = new WeakMap<object, AccessRule | null>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authentication: AuthenticationGuard,
    private readonly authorization: AuthorizationService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.ruleOf(context);
    if (!rule) throw new ForbiddenError('access_not_declared', 'This route declares no access rule, so it is closed.');
    if (rule.public) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    // A token the handler verifies itself (a subscriber's manage token) is no session or key.
    const bearer = bearerToken(request.headers.authorization);
    const handlerVerified = rule.handlerVerifiedToken;
    if (bearer && handlerVerified) {
      if (handlerVerified.shape.test(bearer)) return true;
      if (!isSessionOrKeyShaped(bearer)) {
        throw new UnauthorizedError(handlerVerified.invalid.code, handlerVerified.invalid.message);
      }
    }
    await this.authentication.canActivate(context);
    const params = request.params as Record<string, string>;
    await this.authorization.authorize(request.user, rule, params);
    if (rule.seller && params[rule.seller]) noteRequestSeller(params[rule.seller]);
    return true;
  }

  /** The handler's rule, else its class's (as `getAllAndOverride`), each read from its metadata once. */
  private ruleOf(context: ExecutionContext): AccessRule | null {
    return this.declared(context.getHandler()) ?? this.declared(context.getClass());
  }

  private declared(target: object): AccessRule | null {
    let rule = this.rules.get(target);
    if (rule === undefined) {
      rule = this.reflector.get<AccessRule | undefined>(ACCESS_RULE, target as () => void) ?? null;
      this.rules.set(target, rule);
    }
    return rule;
  }
}
