import { createHash } from 'node:crypto';
import { Cents, formatMoney } from '../../common/money/money';

/**
 * Payment codes the sandbox hands out for money to be paid in (pix charges and deposits, boletos):
 * well-formed, derived from the record's id, never payable anywhere.
 */

/** A PIX "copia e cola" payload in the EMV layout (without a real CRC: sandbox only). */
export function sandboxPixCode(id: string, amount: Cents): string {
  const field = (tag: string, value: string) => `${tag}${String(value.length).padStart(2, '0')}${value}`;
  const account = field('00', 'BR.GOV.BCB.PIX') + field('01', id);
  const txid = id.replace(/-/g, '').slice(0, 25);
  return (
    field('00', '01') +
    field('26', account) +
    field('52', '0000') +
    field('53', '986') +
    field('54', formatMoney(amount)) +
    field('58', 'BR') +
    field('59', 'SANDBOX SELLER') +
    field('60', 'SAO PAULO') +
    field('62', field('05', txid)) +
    '6304'
  );
}

/** A 47-digit boleto line: 33 digits from the id, a due-date factor placeholder and the amount. */
export function sandboxDigitableLine(id: string, amount: Cents): string {
  const digits = BigInt(`0x${createHash('sha256').update(id).digest('hex').slice(0, 24)}`)
    .toString()
    .padEnd(33, '0')
    .slice(0, 33);
  return `${digits}${'9999'}${String(amount).padStart(10, '0')}`.slice(0, 47);
}
