import { detectBrand, passesLuhn } from './card';

describe('card numbers', () => {
  it.each(['4111111111111111', '5555555555554444', '4000000000000002', '378282246310005', '6062825624254001'])(
    'passes Luhn: %s',
    (n) => expect(passesLuhn(n)).toBe(true),
  );
  it.each(['4111111111111112', '1234', '4111-1111-1111-1111', ''])('fails Luhn: %p', (n) =>
    expect(passesLuhn(n)).toBe(false),
  );

  it.each([
    ['4111111111111111', 'Visa'],
    ['5555555555554444', 'MasterCard'],
    ['2221000000000009', 'MasterCard'],
    ['378282246310005', 'American Express'],
    ['6362970000457013', 'Elo'],
    ['5067000000000000', 'Elo'],
    ['6062825624254001', 'Hipercard'],
    ['36227206271667', 'Diners'],
    ['9999999999999995', null],
  ])('detects the brand of %s as %s', (number, brand) => expect(detectBrand(number)).toBe(brand));
});
