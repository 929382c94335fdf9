import type { FieldErrors } from '../common/errors/api-error';
import { checkMoney, checkPercentage, Cents, formatMoney, formatPercentage } from '../common/money/money';
import { addError, isPlainObject, readTable, Table } from './table';

/** A rate-plan cell: a percentage of the amount plus a fixed amount. */
export interface FeeCell {
  units: number;
  fixed: Cents;
}

/** Reads a rate plan's `fees` document (cells `{"percentage": "2.99", "fixed": "0.50"}`). */
export function readFeeTable(document: unknown, path: string, errors: FieldErrors): Table<FeeCell> {
  return readTable(document, path, readFeeCell, errors);
}

/**
 * A stored fee table as the API shows it: each cell's `fixed` as money with two decimals and its
 * `percentage` without trailing zeros ("1.5" → "1.50", "2.990" → "2.99"), as on transactions.
 */
export function formatFeeTable(document: Record<string, unknown>): Record<string, unknown> {
  const cell = (value: unknown): unknown => {
    if (!isPlainObject(value)) return value;
    const percentage = checkPercentage(value.percentage);
    const fixed = checkMoney(value.fixed, { allowZero: true });
    if (!percentage.ok || !fixed.ok) return value; // not a cell the sync accepts: shown as stored
    return { percentage: formatPercentage(percentage.value), fixed: formatMoney(fixed.value) };
  };
  return mapEntries(document, (brands) => (isPlainObject(brands) ? mapEntries(brands, cell) : brands));
}

function mapEntries(object: Record<string, unknown>, map: (value: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, map(value)]));
}

function readFeeCell(cell: unknown, path: string, errors: FieldErrors): FeeCell | null {
  if (!isPlainObject(cell)) {
    addError(errors, path, 'must be an object with "percentage" and "fixed"');
    return null;
  }
  let valid = true;
  for (const key of Object.keys(cell)) {
    if (key !== 'percentage' && key !== 'fixed') {
      addError(errors, `${path}.${key}`, 'unknown field: a fee cell has "percentage" and "fixed" only');
      valid = false;
    }
  }
  const percentage = checkPercentage(cell.percentage);
  if (!percentage.ok) {
    addError(errors, `${path}.percentage`, cell.percentage === undefined ? 'is required' : percentage.message);
  }
  const fixed = checkMoney(cell.fixed, { allowZero: true });
  if (!fixed.ok) {
    addError(errors, `${path}.fixed`, cell.fixed === undefined ? 'is required' : fixed.message);
  }
  return valid && percentage.ok && fixed.ok ? { units: percentage.value, fixed: fixed.value } : null;
}
