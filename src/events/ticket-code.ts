import { randomInt } from 'node:crypto';

/**
 * Ticket codes: 20 symbols of a 32-symbol alphabet without the look-alikes 0/O and 1/I
 * (100 random bits from the system's CSPRNG), shown in groups of five: `7KQ2M-XR4PD-…`.
 * URL-safe as they are; typed back in any case, with or without the dashes.
 */
export const TICKET_CODE_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const GROUPS = 4;
const GROUP_LENGTH = 5;
export const TICKET_CODE_BITS = GROUPS * GROUP_LENGTH * Math.log2(TICKET_CODE_ALPHABET.length);

export function newTicketCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += TICKET_CODE_ALPHABET[randomInt(TICKET_CODE_ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/** The canonical form of a code as typed (case and dashes free), or null when it cannot be one. */
export function normaliseTicketCode(input: string): string | null {
  const symbols = input.toUpperCase().replace(/[-\s]/g, '');
  if (symbols.length !== GROUPS * GROUP_LENGTH) return null;
  if ([...symbols].some((c) => !TICKET_CODE_ALPHABET.includes(c))) return null;
  return symbols.match(new RegExp(`.{${GROUP_LENGTH}}`, 'g'))!.join('-');
}
