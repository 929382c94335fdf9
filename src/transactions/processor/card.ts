/** Card number checks: the Luhn check digit and the brand from the number's prefix (BIN). */
export const CARD_BRANDS = ['Visa', 'MasterCard', 'Elo', 'American Express', 'Hipercard', 'Diners'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

export function passesLuhn(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

// Elo and Hipercard ranges overlap Visa's and MasterCard's prefixes, so they are tried first.
const ELO =
  /^(401178|401179|431274|438935|451416|457393|457631|457632|504175|506699|5067[0-7]\d|509\d{3}|627780|636297|636368|650(0[3-9]|[1-4]\d|5[0-1])|6504(0[5-9]|[1-3]\d)|650(48[5-9]|49\d|5[0-2]\d|53[0-8])|6505(4[1-9]|[5-8]\d|9[0-8])|6507(0[0-9]|1[0-8])|65072[0-7]|6509(0[1-9]|1\d|20)|6516(5[2-9]|[6-7]\d)|6550([0-1]\d|2[1-9]|[3-4]\d|5[0-8]))/;
const HIPERCARD = /^(606282|3841(0|4|6)0)/;
const AMEX = /^3[47]/;
const DINERS = /^3(0[0-5]|[689])/;
const MASTERCARD = /^(5[1-5]|2(2(2[1-9]|[3-9]\d)|[3-6]\d{2}|7([01]\d|20)))/;
const VISA = /^4/;

export function detectBrand(number: string): CardBrand | null {
  if (ELO.test(number)) return 'Elo';
  if (HIPERCARD.test(number)) return 'Hipercard';
  if (AMEX.test(number)) return 'American Express';
  if (DINERS.test(number)) return 'Diners';
  if (MASTERCARD.test(number)) return 'MasterCard';
  if (VISA.test(number)) return 'Visa';
  return null;
}
