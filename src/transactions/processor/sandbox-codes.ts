import { createHash } from 'node:crypto';
import { Cents, formatMoney } from '../../common/money/money';

/**
 * Payment codes the sandbox hands out for money to be paid in (pix charges and deposits, boletos):
 * well-formed, derived from the record's id, never payable anywhere.
 */

/** A PIX "copia e cola" payload in the EMV layout (BR Code), with its CRC, for a key no bank knows. */
export function sandboxPixCode(id: string, amount: Cents): string {
  const field = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
  const account = field('00', 'BR.GOV.BCB.PIX') + field('01', id);
  const txid = id.replace(/-/g, '').slice(0, 25);
  const payload =
    field('00', '01') +
    field('26', account) +
    field('52', '0000') +
    field('53', '986') +
    field('54', formatMoney(amount)) +
    field('58', 'BR') +
    field('59', 'SANDBOX SELLER') +
    field('60', 'SAO PAULO') +
    field('62', field('05', txid)) +
    '6304';
  return payload + crc16(payload).toString(16).toUpperCase().padStart(4, '0');
}

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), the check of a BR Code, over its text up to `6304`. */
export function crc16(text: string): number {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** A 47-digit boleto line: 33 digits from the id, a due-date factor placeholder and the amount. */
export function sandboxDigitableLine(id: string, amount: Cents): string {
  const digits = BigInt(`0x${createHash('sha256').update(id).digest('hex').slice(0, 24)}`)
    .toString()
    .padEnd(33, '0')
    .slice(0, 33);
  return `${digits}${'9999'}${String(amount).padStart(10, '0')}`.slice(0, 47);
}
