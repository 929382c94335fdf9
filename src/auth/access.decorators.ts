import { ExecutionContext, SetMetadata, applyDecorators, createParamDecorator } from '@nestjs/common';
import { ApiExtension, ApiSecurity } from '@nestjs/swagger';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { ACCESS_EXTENSION, API_KEY_SCHEME, JWT_SCHEME, PUBLIC_EXTENSION } from '../openapi/openapi';
import type { Permission } from './permissions';
import type { AuthenticatedRequest, Principal } from './principal';

export const ACCESS_RULE = Symbol('access_rule');

export interface AccessRule {
  public?: boolean;
  /** Which credentials the route takes: a user's JWT (default), a seller API key, or both. */
  credentials?: 'jwt' | 'api_key' | 'jwt_or_api_key';
  /** The route parameter holding the seller the request acts on. */
  seller?: string;
  /** Needed on that seller by a user (superusers skip it). Without it, any access to the seller will do. */
  permission?: Permission;
  superuser?: boolean;
  /** An unknown seller answers 400 `Seller not found.` instead of 404 (API key routes, spec 4.1). */
  unknownSellerIsBadRequest?: boolean;
  /**
   * Bearer tokens of this shape are neither sessions nor keys: the guard lets them through
   * unauthenticated (no `request.user`) and the handler verifies them itself (a subscriber's
   * manage token). Sessions and keys follow the rule as usual; a token of no shape the route
   * takes is refused with `invalid` (401), as the handler refuses a wrong one of its shape.
   * `scheme`: the OpenAPI security scheme that documents them.
   */
  handlerVerifiedToken?: { shape: RegExp; scheme: string; invalid: { code: string; message: string } };
}

/**
 * The route needs no credential (health, public checkout pages, login). Its OpenAPI
 * operation says so with an empty security requirement.
 */
export function Public(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ACCESS_RULE, { public: true } satisfies AccessRule),
    ApiExtension(PUBLIC_EXTENSION, true),
  );
}

/**
 * The one access declaration of a route: which credentials it takes, which seller it acts
 * on and the permission needed there. The global guard enforces it; routes without any
 * declaration are refused. It also writes the OpenAPI security entry and auth errors.
 */
export function Authenticated(rule: Omit<AccessRule, 'public'> = {}): MethodDecorator & ClassDecorator {
  const credentials = rule.credentials ?? 'jwt';
  const schemes =
    credentials === 'jwt' ? [JWT_SCHEME] : credentials === 'api_key' ? [API_KEY_SCHEME] : [JWT_SCHEME, API_KEY_SCHEME];
  return applyDecorators(
    SetMetadata(ACCESS_RULE, { ...rule, credentials }),
    ...[...schemes, ...(rule.handlerVerifiedToken ? [rule.handlerVerifiedToken.scheme] : [])].map((scheme) =>
      ApiSecurity(scheme),
    ),
    ApiExtension(ACCESS_EXTENSION, {
      credentials,
      permission: rule.permission,
      superuser: rule.superuser,
      seller: rule.seller,
    }),
    ApiErrorResponses(401, 403, ...(rule.seller ? [404] : [])),
  );
}

/** The calling principal (set by the guard). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().user,
);
