import { describeInLuxonZones } from '../../../test/support/brasilia';
import { cardExpired, detectBrand, passesLuhn } from './card';

/** A 16-digit number starting with `prefix` (the check digit does not matter to brand detection). */
const withPrefix = (prefix: string | number) => String(prefix).padEnd(16, '0');

describe('card numbers', () => {
  it.each(['4111111111111111', '5555555555554444', '4000000000000002', '378282246310005', '6062825624254001'])(
    'passes Luhn: %s',
    (n) => expect(passesLuhn(n)).toBe(true),
  );
  it.each([
    '4111111111111112',
    '1234',
    '4111-1111-1111-1111',
    '',
    // one digit too few or too many around a valid 12..19-digit body
    '00000000000',
    '00000000000000000000',
    // digits around other characters
    'x4111111111111111',
    '4111111111111111x',
    // a doubled 9 counts as 9 (18 - 9), not 0: 0…0 9 9 sums to 9 + 9 = 18 → fails; 0…0 1 8 passes
    '000000000099',
  ])('fails Luhn: %p', (n) => expect(passesLuhn(n)).toBe(false));

  it('doubles every second digit from the right, subtracting 9 above 9', () => {
    expect(passesLuhn('000000000018')).toBe(true); // 1 doubled = 2, + 8 = 10
    expect(passesLuhn('000000000091')).toBe(true); // 9 doubled = 18 → 9, + 1 = 10
    expect(passesLuhn('000000000059')).toBe(true); // 5 doubled = 10 → 1, + 9 = 10
    expect(passesLuhn('000000000109')).toBe(true); // 1 + 0 + 9 = 10
  });

  it.each([
    ['4111111111111111', 'Visa'],
    ['5555555555554444', 'MasterCard'],
    ['2221000000000009', 'MasterCard'],
    ['378282246310005', 'American Express'],
    ['6362970000457013', 'Elo'],
    ['5067000000000000', 'Elo'],
    ['6062825624254001', 'Hipercard'],
    ['36227206271667', 'Diners'],
    ['6011111111111117', 'Discover'],
    ['6445644564456445', 'Discover'],
    ['3530111333300000', 'JCB'],
    ['9999999999999995', null],
    ['', null],
    ['41111a', null],
    ['4 11', null],
    ['a4111', null],
  ])('detects the brand of %p as %p', (number, brand) => expect(detectBrand(number)).toBe(brand));

  it.each([
    // Elo: each range's first and last prefix, and the prefixes just outside it
    [401178, 'Elo'],
    [401179, 'Elo'],
    [401177, 'Visa'],
    [401180, 'Visa'],
    [431274, 'Elo'],
    [431273, 'Visa'],
    [431275, 'Visa'],
    [438935, 'Elo'],
    [438934, 'Visa'],
    [451416, 'Elo'],
    [451417, 'Visa'],
    [457393, 'Elo'],
    [457394, 'Visa'],
    [457631, 'Elo'],
    [457632, 'Elo'],
    [457630, 'Visa'],
    [457633, 'Visa'],
    [504175, 'Elo'],
    [504174, null],
    [504176, null],
    [506698, null],
    [506699, 'Elo'],
    [506700, 'Elo'],
    [506779, 'Elo'],
    [506780, null],
    [508999, null],
    [509000, 'Elo'],
    [509999, 'Elo'],
    [510000, 'MasterCard'],
    [627779, null],
    [627780, 'Elo'],
    [627781, null],
    [636297, 'Elo'],
    [636296, null],
    [636368, 'Elo'],
    [636369, null],
    [650029, 'Discover'],
    [650030, 'Elo'],
    [650250, 'Elo'],
    [650538, 'Elo'],
    [650539, 'Discover'],
    [650540, 'Discover'],
    [650541, 'Elo'],
    [650598, 'Elo'],
    [650599, 'Discover'],
    [650699, 'Discover'],
    [650700, 'Elo'],
    [650718, 'Elo'],
    [650719, 'Discover'],
    [650720, 'Elo'],
    [650727, 'Elo'],
    [650728, 'Discover'],
    [650900, 'Discover'],
    [650901, 'Elo'],
    [650920, 'Elo'],
    [650921, 'Discover'],
    [651651, 'Discover'],
    [651652, 'Elo'],
    [651679, 'Elo'],
    [651680, 'Discover'],
    [654999, 'Discover'],
    [655000, 'Elo'],
    [655019, 'Elo'],
    [655020, 'Discover'],
    [655021, 'Elo'],
    [655058, 'Elo'],
    [655059, 'Discover'],
    // Hipercard
    [606282, 'Hipercard'],
    [606281, null],
    [606283, null],
    [384100, 'Hipercard'],
    [384140, 'Hipercard'],
    [384160, 'Hipercard'],
    [384120, 'Diners'],
    [384101, 'Diners'],
    [384000, 'Diners'],
    // American Express and Diners
    [34, 'American Express'],
    [37, 'American Express'],
    [35, null],
    [33, null],
    [300, 'Diners'],
    [305, 'Diners'],
    [306, null],
    [36, 'Diners'],
    [38, 'Diners'],
    [39, 'Diners'],
    [31, null],
    // Discover (6011, 644–649, 65 but Elo's 65 ranges) and JCB (3528–3589)
    [6011, 'Discover'],
    [6010, null],
    [6012, null],
    [644, 'Discover'],
    [649, 'Discover'],
    [643, null],
    [65, 'Discover'],
    [650030, 'Elo'],
    [3528, 'JCB'],
    [3589, 'JCB'],
    [3527, null],
    [3590, null],
    // MasterCard: 51–55 and the 2-series 2221–2720
    [50, null],
    [51, 'MasterCard'],
    [55, 'MasterCard'],
    [56, null],
    [2220, null],
    [2221, 'MasterCard'],
    [2229, 'MasterCard'],
    [2230, 'MasterCard'],
    [2299, 'MasterCard'],
    [2300, 'MasterCard'],
    [2699, 'MasterCard'],
    [2700, 'MasterCard'],
    [2719, 'MasterCard'],
    [2720, 'MasterCard'],
    [2721, null],
    [2800, null],
    // Visa: anything starting with 4 that is not Elo; a 4 elsewhere in the number is not Visa
    [4, 'Visa'],
    [14, null],
  ])('detects the prefix %p as %p', (prefix, brand) => expect(detectBrand(withPrefix(prefix))).toBe(brand));

  it('needs the whole prefix: a number shorter than a range`s prefix is not in it', () => {
    expect(detectBrand('50917')).toBeNull();
    expect(detectBrand('4')).toBe('Visa');
  });
});

describeInLuxonZones('card expiry', () => {
  it('is good to the end of its month in Brasília', () => {
    // 30 November ends in Brasília at 03:00 UTC on 1 December.
    expect(cardExpired(11, 2026, new Date('2026-12-01T02:59:59.999Z'))).toBe(false);
    expect(cardExpired(11, 2026, new Date('2026-12-01T03:00:00.000Z'))).toBe(true);
    expect(cardExpired(12, 2026, new Date('2027-01-01T02:59:59.999Z'))).toBe(false);
    expect(cardExpired(12, 2026, new Date('2027-01-01T03:00:00.000Z'))).toBe(true);
    expect(cardExpired(1, 2027, new Date('2026-12-31T12:00:00.000Z'))).toBe(false);
    expect(cardExpired(12, 2025, new Date('2026-06-01T00:00:00.000Z'))).toBe(true);
  });
});
