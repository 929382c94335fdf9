import { applyDecorators } from '@nestjs/common';
import { IsEmail, IsString, MaxLength, ValidateBy } from 'class-validator';

const MESSAGE = 'must be an e-mail address';

/** Control and format characters (zero-width spaces, direction overrides): invisible in an address that looks like another. */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

/**
 * An e-mail address, at most 254 characters (RFC 5321), without invisible characters (an
 * account "a\u200b@example.com" would look like "a@example.com"). A missing value or one of
 * another kind is "must be an e-mail address", never a length message about a value that is not there.
 */
export function EmailField(): PropertyDecorator {
  return applyDecorators(
    IsString({ message: MESSAGE }),
    IsEmail({}, { message: MESSAGE }),
    ValidateBy({
      name: 'visibleCharacters',
      validator: {
        validate: (value) => typeof value !== 'string' || !INVISIBLE.test(value),
        defaultMessage: () => 'must not contain invisible or control characters',
      },
    }),
    MaxLength(254),
  );
}
