import type { ColumnOptions } from 'typeorm';
import { centsFromDb } from './money';

/** A bigint column of cents, read as a safe JavaScript integer (the driver returns bigint as text). */
export function centsColumn(name?: string): ColumnOptions {
  return {
    type: 'bigint',
    ...(name ? { name } : {}),
    transformer: {
      to: (value: number | null | undefined) => value,
      from: (value: string | null) => (value === null ? null : centsFromDb(value)),
    },
  };
}
