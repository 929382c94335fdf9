import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy, ValidationOptions } from 'class-validator';
import { checkMoney, checkPercentage, MoneyRules } from './money';

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

/** A DTO field holding a percentage, 0..100 with at most 4 decimals, string or number. */
export function PercentageField(options: { description?: string } = {}, validation?: ValidationOptions): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      oneOf: [{ type: 'string', pattern: '^[0-9]{1,3}(\\.[0-9]{1,4})?$' }, { type: 'number', minimum: 0, maximum: 100 }],
      example: '2.5',
      description: options.description ?? 'Percentage from 0 to 100 with at most 4 decimals.',
    }),
    ValidateBy(
      {
        name: 'isPercentage',
        validator: {
          validate: (value) => checkPercentage(value).ok,
          defaultMessage: () => 'must be a number between 0 and 100 with at most 4 decimals',
        },
      },
      validation,
    ),
  );
}
