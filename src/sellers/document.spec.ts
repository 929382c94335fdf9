import { isValidCnpj, isValidCpf, normaliseDocument } from './document';

describe('CPF and CNPJ check digits', () => {
  it.each(['52998224725', '11144477735', '39053344705'])('accepts the valid CPF %s', (cpf) =>
    expect(isValidCpf(cpf)).toBe(true),
  );
  it.each(['52998224724', '11111111111', '1114447773', '11144477736'])('refuses the CPF %s', (cpf) =>
    expect(isValidCpf(cpf)).toBe(false),
  );
  it.each(['11222333000181', '45997418000153', '11444777000161'])('accepts the valid CNPJ %s', (cnpj) =>
    expect(isValidCnpj(cnpj)).toBe(true),
  );
  it.each(['11222333000182', '00000000000000', '1122233300018'])('refuses the CNPJ %s', (cnpj) =>
    expect(isValidCnpj(cnpj)).toBe(false),
  );

  it('accepts punctuation and keeps the digits', () => {
    expect(normaliseDocument('529.982.247-25')).toEqual({ digits: '52998224725', type: 'cpf' });
    expect(normaliseDocument('11.222.333/0001-81')).toEqual({ digits: '11222333000181', type: 'cnpj' });
    expect(normaliseDocument('5299822472a')).toBeNull();
    expect(normaliseDocument('123')).toBeNull();
  });
});
