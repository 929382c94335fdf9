import { SetMetadata, applyDecorators } from '@nestjs/common';

export const IS_PUBLIC = Symbol('is_public');
const OPENAPI_SECURITY = 'swagger/apiSecurity';

/**
 * The route needs no credential (health, public checkout pages, login). Its OpenAPI
 * operation says so with an empty security requirement.
 */
export function Public(): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(IS_PUBLIC, true), SetMetadata(OPENAPI_SECURITY, []));
}
