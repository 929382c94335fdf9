import { pixKeyType } from './pix-key';

describe('pixKeyType', () => {
  it.each([
    ['52998224725', 'cpf'],
    ['11222333000181', 'cnpj'],
    ['+5511987654321', 'phone'],
    ['+551133334444', 'phone'],
    ['123e4567-e89b-42d3-a456-426614174000', 'evp'],
    ['ana@example.com', 'email'],
    ['fail@sandbox.test', 'email'],
  ])('%s is a %s key', (key, type) => {
    expect(pixKeyType(key)).toBe(type);
  });

  it.each([
    ['52998224724', 'a CPF with a wrong check digit'],
    ['11111111111', 'a CPF of one repeated digit'],
    ['529.982.247-25', 'a CPF with punctuation'],
    ['11987654321', 'a phone without +55'],
    ['+1415555012', 'a phone of another country'],
    ['+55119876543210', 'a phone with too many digits'],
    ['ana@', 'half an e-mail'],
    [`${'a'.repeat(70)}@example.com`, 'an e-mail over 77 characters'],
    ['Ana Souza', 'a name'],
    ['', 'nothing'],
  ])('%s is not a key (%s)', (key) => {
    expect(pixKeyType(key)).toBeNull();
  });
});
