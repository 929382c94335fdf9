import { FieldRule } from '../common/validation/field-rule';

/**
 * Brazilian tax ids: CPF (people, 11 digits) and CNPJ (companies, 14 digits), each ending in
 * two check digits computed modulo 11. Punctuation ("123.456.789-09", "12.345.678/0001-95")
 * is accepted and dropped.
 */
export type DocumentType = 'cpf' | 'cnpj';

export function normaliseDocument(input: string): { digits: string; type: DocumentType } | null {
  if (!/^[0-9./\- ]+$/.test(input)) return null;
  const digits = input.replace(/\D/g, '');
  if (isValidCpf(digits)) return { digits, type: 'cpf' };
  if (isValidCnpj(digits)) return { digits, type: 'cnpj' };
  return null;
}

export function isValidCpf(digits: string): boolean {
  if (!/^\d{11}$/.test(digits) || allSame(digits)) return false;
  const d = [...digits].map(Number);
  const check = (length: number) => {
    let sum = 0;
    for (let i = 0; i < length; i++) sum += d[i] * (length + 1 - i);
    const rest = (sum * 10) % 11;
    return rest === 10 ? 0 : rest;
  };
  return check(9) === d[9] && check(10) === d[10];
}

export function isValidCnpj(digits: string): boolean {
  if (!/^\d{14}$/.test(digits) || allSame(digits)) return false;
  const d = [...digits].map(Number);
  const check = (length: number) => {
    const weights = length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const sum = weights.reduce((acc, w, i) => acc + w * d[i], 0);
    const rest = sum % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  return check(12) === d[12] && check(13) === d[13];
}

/** 000…0, 111…1 and the like pass the check digits but are no one's document. */
function allSame(digits: string): boolean {
  return new Set(digits).size === 1;
}

/** A CPF or CNPJ field of a request body (punctuation accepted), refused unless its check digits hold. */
export function CpfOrCnpj(): PropertyDecorator {
  return FieldRule('isCpfOrCnpj', (document) =>
    typeof document !== 'string' || normaliseDocument(document) ? null : 'must be a valid CPF or CNPJ',
  );
}
