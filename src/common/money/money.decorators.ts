import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy, ValidationOptions } from 'class-validator';
import { checkMoney, MoneyRules } from './money';

/** A DTO field holding money as the API's decimal string (validated by the money helper). */
export function MoneyField(
  options: MoneyRules & { description?: string; example?: string; required?: boolean } = {},
  validation?: ValidationOptions,
): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: 'string',
      pattern: '^(0|[1-9][0-9]{0,7})(\\.[0-9]{1,2})?$',
      example: options.example ?? '150.00',
      description: options.description ?? 'Amount in BRL as a decimal string with at most two decimals.',
      required: options.required ?? true,
    }),
    ValidateBy(
      {
        name: 'isMoney',
        validator: {
          validate: (value) => checkMoney(value, options).ok,
          defaultMessage: (args) => {
            const checked = checkMoney(args?.value, options);
            return checked.ok ? '' : checked.message;
          },
        },
      },
      validation,
    ),
  );
}
