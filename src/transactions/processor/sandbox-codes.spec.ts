import { crc16, sandboxPixCode } from './sandbox-codes';

describe('sandbox payment codes', () => {
  it('computes the CRC-16/CCITT-FALSE of a BR Code', () => {
    expect(crc16('123456789')).toBe(0x29b1); // the algorithm's check value
    // The static BR Code of the Banco Central's manual, which ends in its CRC 1D3D.
    const manual =
      '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR' +
      '5913Fulano de Tal6008BRASILIA62070503***6304';
    expect(crc16(manual).toString(16).toUpperCase()).toBe('1D3D');
  });

  it('ends a pix code with the CRC of everything before it, after the 6304 tag', () => {
    const code = sandboxPixCode('0b6c5bd4-3c5e-4d0e-9a53-1d6c3f0f0f0f', 12345);
    expect(code).toMatch(/^000201.*5406123\.45.*6304[0-9A-F]{4}$/);
    expect(code.slice(-4)).toBe(crc16(code.slice(0, -4)).toString(16).toUpperCase().padStart(4, '0'));
  });
});
