import { ValidateBy, ValidationOptions } from 'class-validator';

/** White space and invisible format characters (zero-width space and joiners, byte-order mark…). */
const INVISIBLE = /[\s\p{Cf}]/gu;

/**
 * A required text with something in it: neither empty nor only white space or invisible
 * characters ("  " or a zero-width space names no one). Other kinds of value are left to the
 * field's type check.
 */
export function IsNotBlank(validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isNotEmpty',
      validator: {
        validate: (value) =>
          value !== undefined && value !== null && (typeof value !== 'string' || value.replace(INVISIBLE, '') !== ''),
        defaultMessage: () => 'should not be empty or blank',
      },
    },
    validation,
  );
}
