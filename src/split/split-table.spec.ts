import type { FieldErrors } from '../common/errors/api-error';
import { readFeeTable } from './fee-table';
import { parseSplitDocument, repeatedKeys } from './split-table';

const parse = (raw: string) => {
  const errors: FieldErrors = {};
  const parsed = parseSplitDocument(raw, 'split_details', errors);
  return { ...parsed, errors };
};

describe('split table documents', () => {
  it('accepts single quotes, normalised to double quotes, and keeps labels in document order', () => {
    const { normalized, table, errors } = parse("{'credit3': {'Visa': {'Programador': 0.5, 'Master': '1.25'}}}");
    expect(errors).toEqual({});
    expect(normalized).toBe('{"credit3": {"Visa": {"Programador": 0.5, "Master": "1.25"}}}');
    expect(table.get('credit3')!.get('Visa')).toEqual({
      labels: ['Programador', 'Master'],
      units: [5_000, 12_500],
      totalUnits: 17_500,
    });
  });

  it.each([
    ['{not json', 'split_details', /not valid JSON/],
    ['[]', 'split_details', /must be an object/],
    ['{"credit0": {}}', 'split_details.credit0', /unknown key/],
    ['{"pix1": {}}', 'split_details.pix1', /debit1/],
    ['{"debit2": {}}', 'split_details.debit2', /1 installment/],
    ['{"credit22": {}}', 'split_details.credit22', /unknown key/],
    ['{"credit1": []}', 'split_details.credit1', /keyed by card brand/],
    ['{"credit1": {"Visa": 5}}', 'split_details.credit1.Visa', /must be an object mapping/],
    ['{"credit3": {"Visa": {"Agente": -1}}}', 'split_details.credit3.Visa.Agente', /between 0 and 100/],
    ['{"credit3": {"Visa": {"Agente": 100.5}}}', 'split_details.credit3.Visa.Agente', /between 0 and 100/],
    ['{"credit3": {"Visa": {"Agente": "1.00001"}}}', 'split_details.credit3.Visa.Agente', /4 decimals/],
    ['{"credit3": {"Visa": {"A": 60, "B": 50}}}', 'split_details.credit3.Visa', /sum to 110, more than 100/],
    ['{"credit3": {"": {"A": 1}}}', 'split_details.credit3.', /brand/],
    ['{"credit3": {"Visa": {"2": 1}}}', 'split_details.credit3.Visa.2', /plain number/],
    ['{"credit3": {"Visa": {"__proto__": 1}}}', 'split_details.credit3.Visa.__proto__', /every object has/],
    ['{"credit3": {"Visa": {"constructor": 1}}}', 'split_details.credit3.Visa.constructor', /every object has/],
  ])('reports %s at its path', (raw, path, message) => {
    const { errors } = parse(raw);
    expect(Object.keys(errors)).toEqual([path]);
    expect(errors[path][0]).toMatch(message);
  });

  it('refuses a key given twice in one object, at its path (JSON would keep only the last)', () => {
    const { errors, table } = parse(
      "{'credit1': {'Visa': {'M': 90, 'A': 20, 'M': 10}}, 'debit1': {'PIX': {'M': 1}}, 'debit1': {'PIX': {'M': 2}}}",
    );
    expect(errors).toEqual({
      'split_details.credit1.Visa.M': ['is given more than once'],
      'split_details.debit1': ['is given more than once'],
    });
    expect(table.size).toBe(0);
  });

  it.each([
    ['{"a": {"b": 1}, "c": {"b": 2}}', []],
    ['{"a": [{"x": 1}, {"x": 2, "y": "x\\"\\\\", "x": 3}]}', ['a.1.x']],
    ['{"a\\u0062": 1, "ab": 2}', ['ab']],
    ['{"k": "{\\"k\\": 1, \\"k\\": 2}"}', []],
  ])('finds the repeated keys of %s', (json, paths) => {
    expect(repeatedKeys(json)).toEqual(paths);
  });

  it('reports every problem of a document at once', () => {
    const { errors } = parse('{"credit0": {}, "credit2": {"Visa": {"A": "x"}, "Elo": 3}}');
    expect(Object.keys(errors).sort()).toEqual([
      'split_details.credit0',
      'split_details.credit2.Elo',
      'split_details.credit2.Visa.A',
    ]);
  });
});

describe('rate-plan fee tables', () => {
  it('reads cells of percentage and fixed amount', () => {
    const errors: FieldErrors = {};
    const table = readFeeTable({ credit2: { Visa: { percentage: '2.99', fixed: '0.50' } } }, 'fees', errors);
    expect(errors).toEqual({});
    expect(table.get('credit2')!.get('Visa')).toEqual({ units: 29_900, fixed: 50 });
  });

  it('reports bad cells with their paths', () => {
    const errors: FieldErrors = {};
    readFeeTable({ credit2: { Visa: { percentage: '101', fixed: 0.5, extra: 1 }, Elo: {} } }, '[3].fees', errors);
    expect(Object.keys(errors).sort()).toEqual([
      '[3].fees.credit2.Elo.fixed',
      '[3].fees.credit2.Elo.percentage',
      '[3].fees.credit2.Visa.extra',
      '[3].fees.credit2.Visa.fixed',
      '[3].fees.credit2.Visa.percentage',
    ]);
    expect(errors['[3].fees.credit2.Elo.percentage']).toEqual(['is required']);
  });
});

describe('split cells at their limits', () => {
  it('returns the normalised text and an empty table for a document that is not JSON', () => {
    const { normalized, table, errors } = parse("{'credit1': ");
    expect(normalized).toBe('{"credit1": ');
    expect(table.size).toBe(0);
    expect(Object.keys(errors)).toEqual(['split_details']);
  });

  it('accepts a cell whose percentages sum to exactly 100', () => {
    const { table, errors } = parse('{"credit1": {"Visa": {"A": 60, "B": "40.0000"}}}');
    expect(errors).toEqual({});
    expect(table.get('credit1')!.get('Visa')!.totalUnits).toBe(1_000_000);
  });

  it('takes labels of 1 to 100 characters that are not plain numbers', () => {
    const longest = 'L'.repeat(100);
    const { table, errors } = parse(
      JSON.stringify({ credit1: { Visa: { [longest]: 1, '1a': 1, '01': 1, '': 1, '  ': 1, ['M'.repeat(101)]: 1 } } }),
    );
    expect(errors).toEqual({
      'split_details.credit1.Visa.': ['label must be 1 to 100 characters'],
      'split_details.credit1.Visa.  ': ['label must be 1 to 100 characters'],
      [`split_details.credit1.Visa.${'M'.repeat(101)}`]: ['label must be 1 to 100 characters'],
    });
    expect(table.get('credit1')!.has('Visa')).toBe(false);
    const fine = parse(JSON.stringify({ credit1: { Visa: { [longest]: 1, '1a': 1, '01': 1 } } }));
    expect(fine.errors).toEqual({});
    expect(fine.table.get('credit1')!.get('Visa')!.labels).toEqual([longest, '1a', '01']);
  });

  it.each([
    ['a NUL', 'Ag\u0000ente'],
    ['a control character', 'Ag\u0001ente'],
    ['a line break', 'Agente\n'],
    ['a lone surrogate', 'Agente\ud800'],
  ])('refuses a label with %s (PostgreSQL could not store it; it broke every charge of the plan)', (_name, label) => {
    const { errors } = parse(JSON.stringify({ credit1: { Visa: { [label]: 1 } } }));
    expect(errors).toEqual({
      [`split_details.credit1.Visa.${label}`]: ['label must not contain control characters or invalid Unicode'],
    });
  });

  it('takes labels beyond ASCII, emoji included', () => {
    const { errors, table } = parse(JSON.stringify({ credit1: { Visa: { 'Agência São João': 1, 'Parceiro 🤝': 1 } } }));
    expect(errors).toEqual({});
    expect(table.get('credit1')!.get('Visa')!.labels).toEqual(['Agência São João', 'Parceiro 🤝']);
  });

  it.each(['0', '12', '7'])('refuses the plain-number label %p', (label) => {
    const { errors } = parse(JSON.stringify({ credit1: { Visa: { [label]: 1 } } }));
    expect(errors).toEqual({ [`split_details.credit1.Visa.${label}`]: ['label must not be a plain number'] });
  });

  it.each([
    ['{"credit1": {"Visa": {"A": "x"}, "Elo": {"B": 1}}}', 'Visa'],
    ['{"credit1": {"Visa": {"2": 1}, "Elo": {"B": 1}}}', 'Visa'],
    ['{"credit1": {"Visa": {"": 1}, "Elo": {"B": 1}}}', 'Visa'],
    ['{"credit1": {"Visa": {"A": 70, "C": 40}, "Elo": {"B": 1}}}', 'Visa'],
  ])('leaves a refused cell out of the table: %s', (raw, refused) => {
    const { table, errors } = parse(raw);
    expect(Object.keys(errors)).toHaveLength(1);
    expect(table.get('credit1')!.has(refused)).toBe(false);
    expect(table.get('credit1')!.has('Elo')).toBe(true);
  });
});

describe('fee cells', () => {
  const readFees = (document: unknown) => {
    const errors: FieldErrors = {};
    const table = readFeeTable(document, 'fees', errors);
    return { table, errors };
  };

  it.each([
    [
      { percentage: '1', fixed: '0', extra: 1 },
      { 'fees.credit1.Visa.extra': ['unknown field: a fee cell has "percentage" and "fixed" only'] },
    ],
    [{ fixed: '0' }, { 'fees.credit1.Visa.percentage': ['is required'] }],
    [
      { percentage: 'x', fixed: '0' },
      { 'fees.credit1.Visa.percentage': ['must be a number between 0 and 100 with at most 4 decimals'] },
    ],
    [{ percentage: '1' }, { 'fees.credit1.Visa.fixed': ['is required'] }],
    [
      { percentage: '1', fixed: 0.5 },
      { 'fees.credit1.Visa.fixed': ['must be a decimal string with at most two decimals, such as "150.00"'] },
    ],
    ['2.99', { 'fees.credit1.Visa': ['must be an object with "percentage" and "fixed"'] }],
    [null, { 'fees.credit1.Visa': ['must be an object with "percentage" and "fixed"'] }],
  ])('refuses the cell %p and leaves it out', (cell, expected) => {
    const { table, errors } = readFees({ credit1: { Visa: cell, Elo: { percentage: '1', fixed: '0.00' } } });
    expect(errors).toEqual(expected);
    expect(table.get('credit1')!.has('Visa')).toBe(false);
    expect(table.get('credit1')!.get('Elo')).toEqual({ units: 10_000, fixed: 0 });
  });
});
