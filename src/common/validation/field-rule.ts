import { registerDecorator, type ValidationArguments } from 'class-validator';

/**
 * What a rule finds: nothing (null), a message for the field itself, or messages for paths
 * under it (`{ name: 'is required for boleto' }` on `customer` reports `customer.name`).
 */
export type RuleFinding = string | Record<string, string> | null;

/** Marks the constraints of field rules, so `flatten` reports their findings under their paths. */
export const FIELD_RULE_CONTEXT = 'fieldRule';

/**
 * A validation rule of a DTO field that may read the other fields of the object (cross-field
 * rules: "installments must be 1 for pix", "a card is required for credit"). Declared on the
 * field with a name, it runs with the other class-validator constraints, so its errors reach
 * the client through the same pipe, with the same field paths. It runs when the field is
 * present; `whenAbsent: true` runs it on a missing field too (a field required by another's value),
 * provided the field is not `@IsOptional()`, which skips every rule of a missing field: use
 * `@ValidateIf` to say when its other rules apply.
 */
export function FieldRule<T extends object>(
  name: string,
  check: (value: any, object: T) => RuleFinding,
  options: { whenAbsent?: boolean } = {},
): PropertyDecorator {
  return (target, propertyName) => {
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: propertyName as string,
      options: { context: { [FIELD_RULE_CONTEXT]: true } },
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          (value === undefined && !options.whenAbsent) || check(value, args.object as T) === null,
        defaultMessage: (args: ValidationArguments) => JSON.stringify(check(args.value, args.object as T)),
      },
    });
  };
}

/** The messages of one field rule's constraint, by path under the field ('' for the field itself). */
export function ruleFindings(message: string): Array<[string, string]> {
  const finding = JSON.parse(message) as Exclude<RuleFinding, null>;
  return typeof finding === 'string' ? [['', finding]] : Object.entries(finding);
}
