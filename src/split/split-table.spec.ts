import type { FieldErrors } from '../common/errors/api-error';
import { readFeeTable } from './fee-table';
import { parseSplitDocument } from './split-table';

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
  ])('reports %s at its path', (raw, path, message) => {
    const { errors } = parse(raw);
    expect(Object.keys(errors)).toEqual([path]);
    expect(errors[path][0]).toMatch(message);
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
