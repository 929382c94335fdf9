import type { FieldErrors } from '../common/errors/api-error';
import { INHERITED_NAMES } from '../common/validation/inherited-names';
import { UNPRINTABLE } from '../common/validation/one-line.decorator';

/**
 * The table layout shared by split tables (split_details, split_details_online) and rate-plan
 * fee tables (API.md section 6): payment type + installment count, then card brand, then a
 * cell. This module reads such a document into lookup maps, collecting every problem with
 * its path; the cell's own shape is the caller's.
 */
export const WILDCARD_BRAND = 'Todas as bandeiras %';
export const PIX_BRAND = 'PIX';
export const BOLETO_BRAND = 'Boleto';
export const MAX_CREDIT_INSTALLMENTS = 21;
export const PAYMENT_TYPES = ['credit', 'debit', 'pix', 'boleto'] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
export const ENTRY_MODES = ['card_present', 'online'] as const;
export type EntryMode = (typeof ENTRY_MODES)[number];

/** Key → brand → cell. */
export type Table<C> = Map<string, Map<string, C>>;

const KEY = /^(credit|debit)([1-9][0-9]?)$/;
const MAX_BRAND_LENGTH = 60;

export type CellReader<C> = (cell: unknown, path: string, errors: FieldErrors) => C | null;

export function readTable<C>(document: unknown, path: string, readCell: CellReader<C>, errors: FieldErrors): Table<C> {
  const table: Table<C> = new Map();
  if (!isPlainObject(document)) {
    addError(errors, path, 'must be an object keyed by payment type and installments, such as "credit1" or "debit1"');
    return table;
  }
  for (const [key, brands] of Object.entries(document)) {
    const keyPath = `${path}.${key}`;
    const keyProblem = checkKey(key);
    if (keyProblem) {
      addError(errors, keyPath, keyProblem);
      continue;
    }
    if (!isPlainObject(brands)) {
      addError(errors, keyPath, `must be an object keyed by card brand (or "${WILDCARD_BRAND}")`);
      continue;
    }
    const cells = new Map<string, C>();
    for (const [brand, cell] of Object.entries(brands)) {
      const brandPath = `${keyPath}.${brand}`;
      if (brand.trim() === '' || brand.length > MAX_BRAND_LENGTH) {
        addError(errors, brandPath, `brand must be 1 to ${MAX_BRAND_LENGTH} characters`);
        continue;
      }
      if (UNPRINTABLE.test(brand)) {
        addError(errors, brandPath, 'brand must not contain control characters or invalid Unicode');
        continue;
      }
      if (INHERITED_NAMES.has(brand)) {
        // No card brand is named so; split labels and participants refuse such names too.
        addError(errors, brandPath, 'brand must not be a name every object has (such as __proto__)');
        continue;
      }
      const read = readCell(cell, brandPath, errors);
      if (read !== null) cells.set(brand, read);
    }
    table.set(key, cells);
  }
  return table;
}

function checkKey(key: string): string | null {
  const match = KEY.exec(key);
  const expected = `must be "credit1" to "credit${MAX_CREDIT_INSTALLMENTS}" or "debit1"`;
  if (!match)
    return `unknown key: ${expected} (pix and boleto are priced under "debit1" with brands "${PIX_BRAND}" and "${BOLETO_BRAND}")`;
  const installments = Number(match[2]);
  if (match[1] === 'debit' && installments !== 1) return `unknown key: debit has 1 installment only, ${expected}`;
  if (installments > MAX_CREDIT_INSTALLMENTS) return `unknown key: ${expected}`;
  return null;
}

/** Where a payment is looked up (API.md section 7, rule 1): pix and boleto live under debit1. */
export function lookupPosition(
  paymentType: PaymentType,
  installments: number,
  brand: string | null,
): { key: string; brand: string } {
  if (paymentType === 'pix') return { key: 'debit1', brand: PIX_BRAND };
  if (paymentType === 'boleto') return { key: 'debit1', brand: BOLETO_BRAND };
  return {
    key: paymentType === 'credit' ? `credit${installments}` : 'debit1',
    brand: brand ?? '',
  };
}

/** The brand's cell, else the wildcard's, else none (rule 2). */
export function lookupCell<C>(table: Table<C>, key: string, brand: string): C | undefined {
  const brands = table.get(key);
  if (!brands) return undefined;
  return brands.get(brand) ?? brands.get(WILDCARD_BRAND);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function addError(errors: FieldErrors, path: string, message: string): void {
  (errors[path] ??= []).push(message);
}
