import { ValidateBy, ValidationOptions } from 'class-validator';

const RFC_3339 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** An RFC 3339 date or date-time ("2026-11-21", "2026-11-21T12:00:00Z") that is a real instant. */
export function IsDateTime(validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      validator: {
        validate: (value) => typeof value === 'string' && RFC_3339.test(value) && !Number.isNaN(Date.parse(value)),
        defaultMessage: () => 'must be an ISO 8601 date-time such as 2026-11-21T12:00:00Z',
      },
    },
    validation,
  );
}
