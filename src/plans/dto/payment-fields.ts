import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { FieldRule } from '../../common/validation/field-rule';
import { ENTRY_MODES, MAX_CREDIT_INSTALLMENTS, PAYMENT_TYPES, PaymentType } from '../../split/table';

// Cross-field rules judge only a known payment type; an unknown one is payment_type's own error.
export const isKnownPayment = (type: unknown): type is PaymentType => PAYMENT_TYPES.includes(type as PaymentType);
export const isCardPayment = (type: unknown) => type === 'credit' || type === 'debit';
/** A payment type the API knows that is not a card: pix or boleto. */
export const isOtherPayment = (type: unknown) => isKnownPayment(type) && !isCardPayment(type);

/** DTO fields that describe a payment, shared by charges, simulations and list filters. */
export function PaymentTypeField(options: { required?: boolean } = {}): PropertyDecorator {
  const required = options.required ?? true;
  return applyDecorators(
    ApiProperty({ enum: PAYMENT_TYPES, required }),
    ...(required ? [] : [IsOptional()]),
    IsIn(PAYMENT_TYPES, { message: `must be one of ${PAYMENT_TYPES.join(', ')}` }),
  );
}

/** Installments of a payment whose object has `payment_type`: only credit takes more than 1. */
export function InstallmentsField(): PropertyDecorator {
  const message = `must be an integer from 1 to ${MAX_CREDIT_INSTALLMENTS}`;
  return applyDecorators(
    ApiProperty({ minimum: 1, maximum: MAX_CREDIT_INSTALLMENTS, default: 1, required: false }),
    IsOptional(),
    IsInt({ message }),
    Min(1, { message }),
    Max(MAX_CREDIT_INSTALLMENTS, { message }),
    FieldRule('installmentsOfType', (installments, payment: { payment_type?: unknown }) =>
      installments !== 1 && isKnownPayment(payment.payment_type) && payment.payment_type !== 'credit'
        ? `must be 1 for ${payment.payment_type}`
        : null,
    ),
  );
}

export function EntryModeField(description = 'Card present or online (default online).'): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ enum: ENTRY_MODES, required: false, example: 'online', description }),
    IsOptional(),
    IsIn(ENTRY_MODES, { message: `must be one of ${ENTRY_MODES.join(', ')}` }),
  );
}
