import { ValidationError as ClassValidatorError, ValidationPipe } from '@nestjs/common';
import { FieldErrors, ValidationError } from '../errors/api-error';

/**
 * The global validation pipe: DTOs with class-validator, unknown fields refused, and every
 * problem reported in `errors` under its field path (`customer.email`, `items.0.quantity`).
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationError(flatten(errors)),
  });
}

export function flatten(errors: ClassValidatorError[], prefix = ''): FieldErrors {
  const result: FieldErrors = {};
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    if (error.constraints) {
      result[path] = Object.values(error.constraints).map((message) => stripProperty(message, error.property));
    }
    if (error.children?.length) Object.assign(result, flatten(error.children, path));
  }
  return result;
}

/** class-validator messages start with the property name ("amount must be ..."); the path already says it. */
function stripProperty(message: string, property: string): string {
  if (message.startsWith(`property ${property} `)) return message.slice(`property ${property} `.length);
  if (message.startsWith(`${property} `)) return message.slice(property.length + 1);
  return message;
}
