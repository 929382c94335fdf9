import { ArgumentMetadata, ValidationError as ClassValidatorError, ValidationPipe } from '@nestjs/common';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { FieldErrors, ValidationError } from '../errors/api-error';
import { FIELD_RULE_CONTEXT, ruleFindings } from './field-rule';
import { INHERITED_NAMES } from './inherited-names';
import { cacheValidationMetadata } from './metadata-cache';
import { isOptionalBody } from './optional.decorator';

// Every validation below, by the request pipe or assertValid, looks rules up through the cache.
cacheValidationMetadata();

/**
 * Objects that passed validation, with the DTO class they passed as and the instance validation
 * made of them: an object the request pipe or `assertValid` already checked is not checked again
 * when a service it is handed to asserts the same class (a charge's body is checked by the pipe,
 * then by the transactions service that every other area calls too). Validated DTOs are not
 * changed afterwards, so the answer still holds.
 */
const checked = new WeakMap<object, { type: ClassConstructor<object>; instance: object }>();

/**
 * The global validation pipe: DTOs with class-validator, unknown fields refused, and every
 * problem reported in `errors` under its field path (`customer.email`, `items.0.quantity`).
 */
export function createValidationPipe(): ValidationPipe {
  return new RememberingValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationError(flatten(errors)),
  });
}

/**
 * Nest's validation pipe, refusing a body that is not an object, inherited names and over-wide
 * objects (see `refuseUnsafeFields`), and remembering the DTOs it validated (see `checked`).
 */
class RememberingValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.metatype && this.toValidate(metadata)) {
      // Nest would validate no body and `null` as an empty object, and a number, string or
      // array as one with none of the DTO's fields: a DTO whose fields are all optional would
      // take them. Only a DTO marked @OptionalBody() may be left out (an empty object then).
      if (metadata.type === 'body' && metadata.data === undefined) {
        if (value === undefined) {
          if (!isOptionalBody(metadata.metatype)) throw ValidationError.of('body', 'is required');
        } else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          throw ValidationError.of('body', 'must be an object');
        }
      }
      refuseUnsafeFields(value);
    }
    const result: unknown = await super.transform(value, metadata);
    if (metadata.metatype && this.toValidate(metadata) && result instanceof metadata.metatype) {
      checked.set(result, { type: metadata.metatype as ClassConstructor<object>, instance: result });
    }
    return result;
  }
}

/**
 * Validates an object built in code (not by the request pipe) with its DTO's declared rules:
 * a service other areas call applies the same rules, with the same paths, as its route.
 */
export async function assertValid<T extends object>(type: ClassConstructor<T>, input: T): Promise<T> {
  const known = checked.get(input);
  if (known?.type === type) return known.instance as T;
  refuseUnsafeFields(input);
  const instance = input instanceof type ? input : plainToInstance(type, input);
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) throw new ValidationError(flatten(errors));
  checked.set(input, { type, instance });
  checked.set(instance, { type, instance });
  return instance;
}

/**
 * The most fields an object of a request may have, at any depth. No DTO or map of this API
 * comes near it; class-transformer's handling of an object takes time in the square of its
 * field count (a 1 MiB body of 90,000 unknown fields held the event loop for seconds).
 */
export const MAX_FIELDS = 1_000;
/**
 * The most items an array of a request may have, at any depth. The longest any DTO takes is
 * 50 (ticket types); class-validator checks every item of an array, also past its declared
 * maximum (300,000 empty objects in a checkout's `items` held the event loop for 13 s).
 */
export const MAX_ITEMS = 100;
/** The most values (fields and array items) a whole request body may hold, at any depth. */
export const MAX_VALUES = 2_000;

/**
 * Refuses, before class-transformer and class-validator see the value:
 * - a field named like a member every object inherits, at any depth, with its path (as an
 *   unknown field: "should not exist"). Without this such a field would pass unseen: the
 *   whitelist check of class-validator finds the inherited member and takes the field for a
 *   declared one, and class-transformer drops it, from a DTO and from a free-form map alike
 *   (a split participant named `constructor` would vanish);
 * - an object with more than MAX_FIELDS fields or an array with more than MAX_ITEMS items,
 *   with its path (`body` for the whole value), and a value holding more than MAX_VALUES in all.
 */
export function refuseUnsafeFields(value: unknown): void {
  const found: Array<[string, string]> = [];
  let values = 0;
  const visit = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object' || values > MAX_VALUES) return;
    const keys = Object.keys(node);
    const array = Array.isArray(node);
    if (array ? keys.length > MAX_ITEMS : keys.length > MAX_FIELDS) {
      const what = array
        ? `${keys.length} items; at most ${MAX_ITEMS}`
        : `${keys.length} fields; at most ${MAX_FIELDS}`;
      found.push([path || 'body', `has ${what} are taken`]);
      return;
    }
    values += keys.length;
    if (values > MAX_VALUES) {
      found.push([
        'body',
        `holds more than ${MAX_VALUES} values (fields and array items, at any depth); at most ${MAX_VALUES} are taken`,
      ]);
      return;
    }
    for (const key of keys) {
      const at = path ? `${path}.${key}` : key;
      if (INHERITED_NAMES.has(key)) found.push([at, 'should not exist']);
      else visit((node as Record<string, unknown>)[key], at);
    }
  };
  visit(value, '');
  // fromEntries makes each path an own field, `__proto__` included (an assignment would set the prototype).
  if (found.length > 0) throw new ValidationError(Object.fromEntries(found.map(([at, message]) => [at, [message]])));
}

export function flatten(errors: ClassValidatorError[], prefix = ''): FieldErrors {
  const result: FieldErrors = {};
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const checks = Object.entries(error.constraints ?? {}).sort(byShapeFirst);
    // A value of the wrong kind: what the checks of its content say of it means nothing (a missing
    // name is not "longer than 200 characters"), and nor do the further checks of its kind (a
    // missing list has no members that "must be strings"): the first of its kind's checks speaks
    // alone (they are sorted first). Field rules still speak.
    const wrongKind = checks.some(([name]) => SHAPE_CHECKS.includes(name));
    for (const [name, message] of checks) {
      const rule = error.contexts?.[name]?.[FIELD_RULE_CONTEXT];
      if (wrongKind && !rule && name !== checks[0][0]) continue;
      // A field rule may report under paths below its field (customer.name); others report the field.
      const findings = rule ? ruleFindings(message) : [['', stripProperty(message, error.property)] as const];
      for (const [below, text] of findings) {
        const messages = (result[below ? `${path}.${below}` : path] ??= []);
        if (!messages.includes(text)) messages.push(text);
      }
    }
    // Nor is what a value of the wrong kind holds checked (the members of an array given for an object).
    if (error.children?.length && !wrongKind) Object.assign(result, flatten(error.children, path));
  }
  return result;
}

/**
 * The checks of what a value is (there at all, a list, a string…), in this order, before those of
 * its content (length, range, members), which are left out when one of them fails: a field left
 * out reads "must be a string", not "must be shorter than 200 characters", in `errors` and in the
 * error's `message`; only the first that fails is said. Otherwise in the order class-validator
 * reports them (a stable sort).
 */
const SHAPE_CHECKS = ['isDefined', 'isArray', 'isObject', 'isString', 'isInt', 'isNumber', 'isBoolean'];
const shapeRank = (name: string) => (SHAPE_CHECKS.includes(name) ? SHAPE_CHECKS.indexOf(name) : SHAPE_CHECKS.length);
const byShapeFirst = ([a]: [string, string], [b]: [string, string]) => shapeRank(a) - shapeRank(b);

/**
 * class-validator messages start with the property name ("amount must be ...", "each value in
 * events must be ..."); the path already says it.
 */
function stripProperty(message: string, property: string): string {
  if (message.startsWith(`property ${property} `)) return message.slice(`property ${property} `.length);
  if (message.startsWith(`${property} `)) return message.slice(property.length + 1);
  if (message.startsWith(`each value in ${property} `))
    return `each value ${message.slice(`each value in ${property} `.length)}`;
  return message;
}
