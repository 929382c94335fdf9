import { onCalendar } from '../../common/time/calendar';

/** Card number checks: the Luhn check digit and the brand from the number's prefix (BIN). */
export const CARD_BRANDS = [
  'Visa',
  'MasterCard',
  'Elo',
  'American Express',
  'Hipercard',
  'Diners',
  'Discover',
  'JCB',
] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

/**
 * Whether a card good through `expMonth`/`expYear` has expired at `at`: it is good to the end of
 * that month in Brasília (CALENDAR_TIME_ZONE), whatever the time zone of the process or database.
 */
export function cardExpired(expMonth: number, expYear: number, at: Date): boolean {
  const { year, month } = onCalendar(at);
  return expYear < year || (expYear === year && expMonth < month);
}

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

/**
 * A range of prefixes of one length, both ends included: `[brand, digits, first, last]`. A
 * number shorter than `digits` reads as a smaller prefix, below `first`.
 */
type PrefixRange = readonly [CardBrand, number, number, number];

/**
 * Prefix ranges, tried in order: Elo and Hipercard ranges overlap Visa's and MasterCard's
 * prefixes, so they come first.
 */
const PREFIX_RANGES: readonly PrefixRange[] = [
  ['Elo', 6, 401178, 401179],
  ['Elo', 6, 431274, 431274],
  ['Elo', 6, 438935, 438935],
  ['Elo', 6, 451416, 451416],
  ['Elo', 6, 457393, 457393],
  ['Elo', 6, 457631, 457632],
  ['Elo', 6, 504175, 504175],
  ['Elo', 6, 506699, 506779],
  ['Elo', 6, 509000, 509999],
  ['Elo', 6, 627780, 627780],
  ['Elo', 6, 636297, 636297],
  ['Elo', 6, 636368, 636368],
  ['Elo', 6, 650030, 650538],
  ['Elo', 6, 650541, 650598],
  ['Elo', 6, 650700, 650718],
  ['Elo', 6, 650720, 650727],
  ['Elo', 6, 650901, 650920],
  ['Elo', 6, 651652, 651679],
  ['Elo', 6, 655000, 655019],
  ['Elo', 6, 655021, 655058],
  ['Hipercard', 6, 606282, 606282],
  ['Hipercard', 6, 384100, 384100],
  ['Hipercard', 6, 384140, 384140],
  ['Hipercard', 6, 384160, 384160],
  ['American Express', 2, 34, 34],
  ['American Express', 2, 37, 37],
  ['Diners', 3, 300, 305],
  ['Diners', 2, 36, 36],
  ['Diners', 2, 38, 39],
  // After Elo, whose 65 ranges are Elo's, and Hipercard.
  ['Discover', 4, 6011, 6011],
  ['Discover', 3, 644, 649],
  ['Discover', 2, 65, 65],
  ['JCB', 4, 3528, 3589],
  ['MasterCard', 2, 51, 55],
  ['MasterCard', 4, 2221, 2720],
  ['Visa', 1, 4, 4],
];

export function detectBrand(number: string): CardBrand | null {
  if (!/^\d+$/.test(number)) return null;
  for (const [brand, digits, first, last] of PREFIX_RANGES) {
    const prefix = Number(number.slice(0, digits));
    if (prefix >= first && prefix <= last) return brand;
  }
  return null;
}
