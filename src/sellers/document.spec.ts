import { isValidCnpj, isValidCpf, normaliseDocument } from './document';

describe('CPF and CNPJ check digits', () => {
  it.each([
    '52998224725',
    '11144477735',
    '39053344705',
    '10000006300', // both check digits 0 (the first from a remainder of 10)
  ])('accepts the valid CPF %s', (cpf) => expect(isValidCpf(cpf)).toBe(true));
  it.each([
    '52998224724', // wrong second check digit
    '10000000027', // wrong first check digit, second computed over it
    '11111111111', // all digits equal
    '00000000000',
    '1114447773', // too short
    '529982247250', // too long
    'x5299822472',
    '5299822472x',
    '11144477736',
  ])('refuses the CPF %s', (cpf) => expect(isValidCpf(cpf)).toBe(false));
  it.each([
    '11222333000181',
    '45997418000153',
    '11444777000161',
    '01122233300000', // first check digit 0 from a remainder of 0
    '01122233310404', // first check digit 0 from a remainder of 1
    '01122233313098', // first check digit 9 from a remainder of 2
  ])('accepts the valid CNPJ %s', (cnpj) => expect(isValidCnpj(cnpj)).toBe(true));
  it.each([
    '11222333000182', // wrong second check digit
    '01122233300018', // wrong first check digit, second computed over it
    '00000000000000',
    '99999999999999',
    '1122233300018', // too short
    '112223330001810', // too long
    'x1222333000181',
    '1122233300018x',
  ])('refuses the CNPJ %s', (cnpj) => expect(isValidCnpj(cnpj)).toBe(false));

  it('accepts punctuation and keeps the digits', () => {
    expect(normaliseDocument('529.982.247-25')).toEqual({ digits: '52998224725', type: 'cpf' });
    expect(normaliseDocument('11.222.333/0001-81')).toEqual({ digits: '11222333000181', type: 'cnpj' });
    expect(normaliseDocument('11 222 333 0001 81')).toEqual({ digits: '11222333000181', type: 'cnpj' });
  });

  it.each([
    '5299822472a',
    'a529.982.247-25',
    '529.982.247-25a',
    '529x982.247-25',
    '123',
    '52998224724', // an invalid CPF of the right length
    '11222333000182', // an invalid CNPJ of the right length
    '',
  ])('refuses %p', (input) => expect(normaliseDocument(input)).toBeNull());
});
