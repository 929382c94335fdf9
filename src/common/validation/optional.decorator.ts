import { ValidateIf } from 'class-validator';

/**
 * The field may be left out, but when present it must be valid: unlike `@IsOptional()`,
 * an explicit `null` is validated (and so rejected by the field's other rules).
 */
export function IsOmittable(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}

const OPTIONAL_BODY = Symbol('optional-body');

/**
 * A request body of this DTO may be left out altogether: a request without one takes every
 * field's default (the route's document says so with `@ApiBody({ required: false })`). Without
 * it a DTO body is required, as the document says.
 */
export function OptionalBody(): ClassDecorator {
  return (target) => Reflect.defineMetadata(OPTIONAL_BODY, true, target);
}

export function isOptionalBody(type: object): boolean {
  return Reflect.getMetadata(OPTIONAL_BODY, type) === true;
}
