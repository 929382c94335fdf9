import type { FieldErrors } from '../common/errors/api-error';
import { isPlainObject, lookupCell, lookupPosition, readTable, Table, WILDCARD_BRAND } from './table';

/** A cell reader that keeps numbers and refuses anything else, to test the table layout alone. */
const numberCell = (cell: unknown, path: string, errors: FieldErrors): number | null => {
  if (typeof cell === 'number') return cell;
  (errors[path] ??= []).push('not a number');
  return null;
};

function read(document: unknown): { table: Table<number>; errors: FieldErrors } {
  const errors: FieldErrors = {};
  return { table: readTable(document, 't', numberCell, errors), errors };
}

const UNKNOWN_KEY =
  'unknown key: must be "credit1" to "credit21" or "debit1" (pix and boleto are priced under "debit1" with brands "PIX" and "Boleto")';

describe('table layout', () => {
  it.each([null, [], 'x', 3])('refuses a document that is not an object: %p', (document) => {
    const { table, errors } = read(document);
    expect(table.size).toBe(0);
    expect(errors).toEqual({
      t: ['must be an object keyed by payment type and installments, such as "credit1" or "debit1"'],
    });
  });

  it('accepts credit1 to credit21 and debit1', () => {
    const { table, errors } = read({ credit1: { Visa: 1 }, credit21: { Visa: 2 }, debit1: { Visa: 3 } });
    expect(errors).toEqual({});
    expect([...table.keys()]).toEqual(['credit1', 'credit21', 'debit1']);
  });

  it.each([
    ['xcredit1', UNKNOWN_KEY],
    ['credit1x', UNKNOWN_KEY],
    ['credit01', UNKNOWN_KEY],
    ['credit100', UNKNOWN_KEY],
    ['credit22', 'unknown key: must be "credit1" to "credit21" or "debit1"'],
    ['debit2', 'unknown key: debit has 1 installment only, must be "credit1" to "credit21" or "debit1"'],
  ])('refuses the key %s with its reason', (key, message) => {
    const { table, errors } = read({ [key]: { Visa: 1 } });
    expect(errors).toEqual({ [`t.${key}`]: [message] });
    expect(table.has(key)).toBe(false);
  });

  it.each([null, [], 1])('refuses brands that are not an object: %p', (brands) => {
    const { errors } = read({ credit1: brands });
    expect(errors).toEqual({ 't.credit1': [`must be an object keyed by card brand (or "${WILDCARD_BRAND}")`] });
  });

  it('takes brands of 1 to 60 characters', () => {
    const long = 'B'.repeat(60);
    const { table, errors } = read({ credit1: { [long]: 1, '   ': 2, ['C'.repeat(61)]: 3 } });
    expect(errors).toEqual({
      't.credit1.   ': ['brand must be 1 to 60 characters'],
      [`t.credit1.${'C'.repeat(61)}`]: ['brand must be 1 to 60 characters'],
    });
    expect([...table.get('credit1')!.keys()]).toEqual([long]);
  });

  it('refuses brands with control characters or named like a member every object has', () => {
    const document = JSON.parse(
      '{"credit1": {"Vi\\u0007sa": 1, "\\u202eElo": 2, "__proto__": 3, "constructor": 4, "Elo": 5}}',
    );
    const { table, errors } = read(document);
    expect(errors).toEqual({
      't.credit1.Vi\u0007sa': ['brand must not contain control characters or invalid Unicode'],
      't.credit1.\u202eElo': ['brand must not contain control characters or invalid Unicode'],
      't.credit1.__proto__': ['brand must not be a name every object has (such as __proto__)'],
      't.credit1.constructor': ['brand must not be a name every object has (such as __proto__)'],
    });
    expect([...table.get('credit1')!.keys()]).toEqual(['Elo']);
  });

  it('leaves refused cells out of the table', () => {
    const { table, errors } = read({ credit1: { Visa: 'x', Elo: 2 } });
    expect(errors).toEqual({ 't.credit1.Visa': ['not a number'] });
    expect(table.get('credit1')).toEqual(new Map([['Elo', 2]]));
  });
});

describe('lookup', () => {
  it('finds pix and boleto under debit1, cards under their type and installments', () => {
    expect(lookupPosition('pix', 1, 'Visa')).toEqual({ key: 'debit1', brand: 'PIX' });
    expect(lookupPosition('boleto', 1, null)).toEqual({ key: 'debit1', brand: 'Boleto' });
    expect(lookupPosition('debit', 1, 'Visa')).toEqual({ key: 'debit1', brand: 'Visa' });
    expect(lookupPosition('credit', 21, 'Elo')).toEqual({ key: 'credit21', brand: 'Elo' });
    expect(lookupPosition('credit', 3, null)).toEqual({ key: 'credit3', brand: '' });
  });

  it("takes the brand's cell, else the wildcard's, else none", () => {
    const table: Table<number> = new Map([
      [
        'credit1',
        new Map([
          ['Visa', 1],
          [WILDCARD_BRAND, 2],
        ]),
      ],
    ]);
    expect(lookupCell(table, 'credit1', 'Visa')).toBe(1);
    expect(lookupCell(table, 'credit1', 'Elo')).toBe(2);
    expect(lookupCell(table, 'credit2', 'Visa')).toBeUndefined();
    expect(lookupCell(new Map([['debit1', new Map([['Visa', 1]])]]), 'debit1', 'Elo')).toBeUndefined();
  });

  it('knows a plain object from null and arrays', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject('x')).toBe(false);
  });
});
