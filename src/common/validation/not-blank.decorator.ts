import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * A required text with something in it: neither empty nor only white space ("  " names no
 * one). Other kinds of value are left to the field's type check.
 */
export function IsNotBlank(validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isNotEmpty',
      validator: {
        validate: (value) =>
          value !== undefined && value !== null && (typeof value !== 'string' || value.trim() !== ''),
        defaultMessage: () => 'should not be empty or blank',
      },
    },
    validation,
  );
}
