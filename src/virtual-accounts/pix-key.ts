import { isEmail, ValidateBy, ValidationOptions } from 'class-validator';
import { isValidCnpj, isValidCpf } from '../sellers/document';

export type PixKeyType = 'cpf' | 'cnpj' | 'email' | 'phone' | 'evp';

/**
 * The kind of a PIX key as the Central Bank's directory (DICT) defines them: a CPF or CNPJ (digits
 * only, valid check digits), an e-mail (up to 77 characters), a phone number (+55, then the area
 * code and number: 10 or 11 digits) or a random key (EVP, a UUID); null for anything else.
 */
export function pixKeyType(key: string): PixKeyType | null {
  if (isValidCpf(key)) return 'cpf';
  if (isValidCnpj(key)) return 'cnpj';
  if (/^\+55\d{10,11}$/.test(key)) return 'phone';
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key)) return 'evp';
  if (key.length <= 77 && isEmail(key)) return 'email';
  return null;
}

export function IsPixKey(validation?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPixKey',
      validator: {
        validate: (value) => typeof value === 'string' && pixKeyType(value) !== null,
        defaultMessage: () =>
          'must be a PIX key: a CPF or CNPJ (digits only), an e-mail, a phone number (+55 and 10 or 11 digits) or a random key (UUID)',
      },
    },
    validation,
  );
}
