import { applyDecorators } from '@nestjs/common';
import { IsEmail, IsString, MaxLength } from 'class-validator';

const MESSAGE = 'must be an e-mail address';

/**
 * An e-mail address, at most 254 characters (RFC 5321). A missing value or one of another kind
 * is "must be an e-mail address", never a length message about a value that is not there.
 */
export function EmailField(): PropertyDecorator {
  return applyDecorators(IsString({ message: MESSAGE }), IsEmail({}, { message: MESSAGE }), MaxLength(254));
}
