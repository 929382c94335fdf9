import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { ENTRY_MODES, MAX_CREDIT_INSTALLMENTS, PAYMENT_TYPES } from './table';

/** DTO fields that describe a payment, shared by charges, simulations and list filters. */
export function PaymentTypeField(options: { required?: boolean } = {}): PropertyDecorator {
  const required = options.required ?? true;
  return applyDecorators(
    ApiProperty({ enum: PAYMENT_TYPES, required }),
    ...(required ? [] : [IsOptional()]),
    IsIn(PAYMENT_TYPES, { message: `must be one of ${PAYMENT_TYPES.join(', ')}` }),
  );
}

export function InstallmentsField(): PropertyDecorator {
  const message = `must be an integer from 1 to ${MAX_CREDIT_INSTALLMENTS}`;
  return applyDecorators(
    ApiProperty({ minimum: 1, maximum: MAX_CREDIT_INSTALLMENTS, default: 1, required: false }),
    IsOptional(),
    IsInt({ message }),
    Min(1, { message }),
    Max(MAX_CREDIT_INSTALLMENTS, { message }),
  );
}

export function EntryModeField(description = 'Card present or online (default online).'): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ enum: ENTRY_MODES, required: false, description }),
    IsOptional(),
    IsIn(ENTRY_MODES, { message: `must be one of ${ENTRY_MODES.join(', ')}` }),
  );
}
