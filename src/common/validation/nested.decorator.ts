import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsObject, ValidateBy, ValidateNested } from 'class-validator';

type DtoClass = () => new (...args: never[]) => object;

const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A field holding one object of the DTO `type`, checked by that DTO's rules. A value that is not
 * an object, an array included, is refused ("must be an object"): @ValidateNested alone takes an
 * array as a list of such objects, so `[]` would pass with none of the DTO's required fields
 * (and `[{…}]` would be read as one). Whether the field may be left out is said apart
 * (@IsDefined, @IsOptional, a field rule): a missing value is not checked here.
 */
export function NestedObject(type: DtoClass): PropertyDecorator {
  return applyDecorators(
    ValidateBy({
      name: 'isObject',
      validator: {
        validate: (value) => value === undefined || isObject(value),
        defaultMessage: () => 'must be an object',
      },
    }),
    ValidateNested(),
    Type(type),
  );
}

/** A list of objects of the DTO `type`, each checked by its rules; a member that is not an object (an array) is refused. */
export function NestedObjects(type: DtoClass): PropertyDecorator {
  return applyDecorators(
    IsObject({ each: true, message: 'must hold objects only' }),
    ValidateNested({ each: true }),
    Type(type),
  );
}
