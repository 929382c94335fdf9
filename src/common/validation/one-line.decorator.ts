import { ValidateBy, ValidationOptions } from 'class-validator';

/**
 * Control characters (line breaks, tabs, NUL, which PostgreSQL cannot keep in JSON…), lone
 * UTF-16 surrogates, which no text can be stored or shown with, and the direction embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a text read as another one
 * ("‮moc.elpmaxe" shown reversed) and carry over into whatever follows it on the line.
 */
export const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/u;

/**
 * A name shown on one line (an e-mail's subject, a ticket, a list): no line breaks or other
 * control characters. Other kinds of value are left to the field's type check.
 */
export function IsOneLine(validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isOneLine',
      validator: {
        validate: (value) => typeof value !== 'string' || !UNPRINTABLE.test(value),
        defaultMessage: () => 'must be one line of text, without control characters',
      },
    },
    validation,
  );
}
