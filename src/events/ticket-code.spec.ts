import { newTicketCode, normaliseTicketCode, TICKET_CODE_ALPHABET, TICKET_CODE_BITS } from './ticket-code';

describe('ticket codes', () => {
  it('carry at least 80 random bits in a URL-safe alphabet without look-alikes', () => {
    expect(TICKET_CODE_BITS).toBeGreaterThanOrEqual(80);
    expect(TICKET_CODE_ALPHABET).toHaveLength(32);
    for (const ambiguous of ['0', 'O', '1', 'I']) expect(TICKET_CODE_ALPHABET).not.toContain(ambiguous);
    const code = newTicketCode();
    expect(code).toMatch(/^[2-9A-HJ-NP-Z]{5}(-[2-9A-HJ-NP-Z]{5}){3}$/);
    expect(encodeURIComponent(code)).toBe(code);
  });

  it('are different each time and use the whole alphabet', () => {
    const codes = new Set(Array.from({ length: 2000 }, newTicketCode));
    expect(codes.size).toBe(2000);
    const seen = new Set([...codes].join('').replace(/-/g, ''));
    expect(seen.size).toBe(32);
  });

  it('are read back whatever the case and dashes', () => {
    const code = newTicketCode();
    expect(normaliseTicketCode(code.toLowerCase().replace(/-/g, ''))).toBe(code);
    expect(normaliseTicketCode(code)).toBe(code);
    expect(normaliseTicketCode('O0000-11111-22222-33333')).toBeNull();
    expect(normaliseTicketCode('ABCDE')).toBeNull();
  });
});
