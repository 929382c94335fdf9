import { Param, PipeTransform } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { NotFoundError } from '../errors/api-error';

/**
 * A path parameter naming a record by UUID, lower-cased. Anything else cannot name a record,
 * so it answers 404 like an unknown id (never a database error).
 */
export function UuidParam(name: string, notFoundMessage = 'Not found.', code = 'not_found'): ParameterDecorator {
  const pipe: PipeTransform<string, string> = {
    transform(value: string) {
      if (!isUUID(value)) throw new NotFoundError(notFoundMessage, code);
      return value.toLowerCase();
    },
  };
  return Param(name, pipe);
}
