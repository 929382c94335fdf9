import { ApiBody } from '@nestjs/swagger';
import { OptionalBody } from './optional.decorator';

/**
 * The body of a POST that takes none (a confirmation, a test, a rotation): left out, or `{}`.
 * Typed on the handler's last parameter (`@Body() _none: NoBody`) so that the validation pipe
 * looks at it: a field sent there is refused like any unknown field (400 "should not exist"),
 * never silently ignored.
 */
@OptionalBody()
export class NoBody {}

/** The document of a route whose body is `NoBody`. */
export function TakesNoBody(): MethodDecorator {
  return ApiBody({
    required: false,
    description: 'None: leave the body out (`{}` is taken too). Any field is refused with 400.',
    schema: { type: 'object', maxProperties: 0 },
  });
}
