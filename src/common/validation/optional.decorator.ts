import { ValidateIf } from 'class-validator';

/**
 * The field may be left out, but when present it must be valid: unlike `@IsOptional()`,
 * an explicit `null` is validated (and so rejected by the field's other rules).
 */
export function IsOmittable(): PropertyDecorator {
  return ValidateIf((_object, value) => value !== undefined);
}
