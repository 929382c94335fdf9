import fc from 'fast-check';
import type { FieldErrors } from '../common/errors/api-error';
import { FULL_PERCENT_UNITS, MAX_AMOUNT_CENTS } from '../common/money/money';
import { readFeeTable } from './fee-table';
import { CompiledSplitPlan, Recipients, ResolutionInput, ResolutionRefused, resolveSplit } from './resolve';
import { parseSplitDocument } from './split-table';
import { WILDCARD_BRAND } from './table';

const W = WILDCARD_BRAND;

function fees(document: unknown) {
  const errors: FieldErrors = {};
  const table = readFeeTable(document, 'fees', errors);
  expect(errors).toEqual({});
  return table;
}

function plan(cardPresent: unknown, online: unknown = {}): CompiledSplitPlan {
  const errors: FieldErrors = {};
  const a = parseSplitDocument(JSON.stringify(cardPresent), 'split_details', errors);
  const b = parseSplitDocument(JSON.stringify(online), 'split_details_online', errors);
  expect(errors).toEqual({});
  return { automaticDeveloperFee: true, cardPresent: a.table, online: b.table };
}

/** The rate plan of these tests, built inside each test so that a broken reader fails the tests, not the file. */
const rates = () =>
  fees({
    credit1: { Visa: { percentage: '2.99', fixed: '0.50' }, [W]: { percentage: '3.5', fixed: '0' } },
    credit12: { [W]: { percentage: '9.99', fixed: '0.50' } },
    debit1: {
      Visa: { percentage: '1.5', fixed: '0' },
      PIX: { percentage: '0.99', fixed: '0' },
      Boleto: { percentage: '0', fixed: '3.49' },
    },
  });

const splits = () =>
  plan(
    {
      credit1: { Visa: { Programador: 0.5, Master: 1.0, Agente: '0.75' }, [W]: { Master: 1.2 } },
      debit1: { PIX: { Master: 0.2 }, Boleto: { Master: '0.3' } },
    },
    { credit1: { [W]: { Master: 2 } } },
  );

const recipients: Recipients = { developerAccount: 'dev-account', participants: { Master: 'master-account' } };
const card = (
  amount: number,
  brand: string,
  installments = 1,
  entryMode: 'card_present' | 'online' = 'card_present',
): ResolutionInput => ({
  amount,
  paymentType: 'credit',
  installments,
  brand,
  entryMode,
});

describe('split resolution (API.md section 7)', () => {
  it('charges the rate-plan fee and gives each label its share: credit 1x Visa, 100.00, card present', () => {
    const r = resolveSplit(card(10_000, 'Visa'), rates(), splits(), recipients);
    // fee: round(10000 × 2.99%) + 50 = 299 + 50
    expect(r.fee).toEqual({ units: 29_900, fixed: 50, amount: 349 });
    expect(r.shares).toEqual([
      { label: 'Programador', role: 'developer', units: 5_000, amount: 50, recipient: 'dev-account' },
      { label: 'Master', role: 'participant', units: 10_000, amount: 100, recipient: 'master-account' },
      { label: 'Agente', role: 'participant', units: 7_500, amount: 75, recipient: null },
    ]);
    expect(r.developerAmount).toBe(50);
    expect(r.participantsAmount).toBe(175);
    expect(r.sellerNet).toBe(10_000 - 349 - 225);
  });

  it('uses split_details_online for online payments and split_details for card-present ones', () => {
    const online = resolveSplit(card(10_000, 'Visa', 1, 'online'), rates(), splits(), recipients);
    expect(online.shares).toEqual([
      { label: 'Master', role: 'participant', units: 20_000, amount: 200, recipient: 'master-account' },
    ]);
    expect(online.sellerNet).toBe(10_000 - 349 - 200);
  });

  it('falls back to the wildcard brand when the brand is not listed', () => {
    const r = resolveSplit(card(10_000, 'MasterCard'), rates(), splits(), recipients);
    expect(r.fee.amount).toBe(350); // 3.5% wildcard fee
    expect(r.shares.map((s) => [s.label, s.amount])).toEqual([['Master', 120]]); // 1.2% wildcard split
    expect(r.sellerNet).toBe(9_530);
  });

  it('charges no share where the split table has no cell, and refuses what the rate plan does not price', () => {
    const r = resolveSplit(card(10_000, 'Visa', 12), rates(), splits(), recipients);
    expect(r.fee.amount).toBe(999 + 50);
    expect(r.shares).toEqual([]);
    expect(r.sellerNet).toBe(10_000 - 1_049);

    const refused = () => resolveSplit({ ...card(10_000, 'Elo'), paymentType: 'debit' }, rates(), splits(), recipients);
    expect(refused).toThrow(ResolutionRefused);
    expect(refused).toThrow(/not accepted/);
    expect(() => resolveSplit(card(10_000, 'Visa', 2), rates(), splits())).toThrow(
      expect.objectContaining({ code: 'payment_method_not_accepted' }),
    );
  });

  it('looks pix up as debit1 / PIX and boleto as debit1 / Boleto', () => {
    const pix = resolveSplit(
      { amount: 5_000, paymentType: 'pix', installments: 1, brand: null, entryMode: 'online' },
      rates(),
      plan({ debit1: { PIX: { Master: 0.2 } } }, { debit1: { PIX: { Master: 0.2 } } }),
      recipients,
    );
    // 0.99% of 50.00 = 49.5 cents, rounded half up to 50
    expect(pix.fee.amount).toBe(50);
    expect(pix.shares.map((s) => s.amount)).toEqual([10]);
    expect(pix.sellerNet).toBe(4_940);

    const boleto = resolveSplit(
      { amount: 5_000, paymentType: 'boleto', installments: 1, brand: 'Visa', entryMode: 'card_present' },
      rates(),
      splits(),
      recipients,
    );
    expect(boleto.fee).toEqual({ units: 0, fixed: 349, amount: 349 });
    expect(boleto.shares.map((s) => s.amount)).toEqual([15]);
    expect(boleto.sellerNet).toBe(5_000 - 349 - 15);
  });

  it('apportions cents by largest remainder, ties to the earlier label, to round_half_up of the total', () => {
    const thirds = plan({ debit1: { Visa: { A: 0.5, B: 0.5, C: 0.5 } } });
    // exact 0.5 cent each, 1.5 in all → 2 cents: the first two labels get one each
    const r = resolveSplit(
      { amount: 100, paymentType: 'debit', installments: 1, brand: 'Visa', entryMode: 'card_present' },
      rates(),
      thirds,
    );
    expect(r.shares.map((s) => s.amount)).toEqual([1, 1, 0]);
    expect(r.fee.amount).toBe(2); // 1.5% of 1.00 = 1.5 → 2
    expect(r.sellerNet).toBe(100 - 2 - 2);
  });

  it('refuses a payment whose fee and shares exceed the amount', () => {
    expect(() => resolveSplit(card(10, 'Visa'), rates(), splits(), recipients)).toThrow(
      expect.objectContaining({ code: 'negative_seller_net' }),
    );
  });

  it('accepts a payment that leaves the seller exactly nothing', () => {
    const flat = fees({ debit1: { Visa: { percentage: '0', fixed: '1.00' } } });
    const r = resolveSplit(
      { amount: 100, paymentType: 'debit', installments: 1, brand: 'Visa', entryMode: 'online' },
      flat,
      null,
    );
    expect(r.sellerNet).toBe(0);
    expect(() =>
      resolveSplit(
        { amount: 99, paymentType: 'debit', installments: 1, brand: 'Visa', entryMode: 'online' },
        flat,
        null,
      ),
    ).toThrow(
      expect.objectContaining({
        name: 'ResolutionRefused',
        code: 'negative_seller_net',
        message: 'Fees and split shares exceed the amount: the seller would receive less than nothing.',
      }),
    );
  });

  it.each([
    [{ paymentType: 'pix', installments: 1, brand: null }, 'pix'],
    [{ paymentType: 'boleto', installments: 1, brand: 'Visa' }, 'boleto'],
    [{ paymentType: 'credit', installments: 2, brand: 'Visa' }, 'credit in 2 installments with Visa'],
    [{ paymentType: 'credit', installments: 1, brand: 'Elo' }, 'credit in 1 installment with Elo'],
    [{ paymentType: 'debit', installments: 1, brand: null }, 'debit in 1 installment with no brand'],
  ] as const)('names what the rate plan does not price: %p', (payment, described) => {
    const none = fees({});
    expect(() => resolveSplit({ amount: 100, entryMode: 'online', ...payment }, none, null)).toThrow(
      expect.objectContaining({
        name: 'ResolutionRefused',
        code: 'payment_method_not_accepted',
        message: `The rate plan does not price ${described}: the payment method is not accepted.`,
      }),
    );
  });

  it('gives no shares for a cell with no labels', () => {
    const empty = plan({ credit1: { Visa: {} } });
    const r = resolveSplit(card(10_000, 'Visa'), rates(), empty, recipients);
    expect(r.shares).toEqual([]);
    expect(r.sellerNet).toBe(10_000 - 349);
  });

  it("leaves an unmapped label's recipient null, whatever the label is called (a plan stored before such labels were refused)", () => {
    const odd = plan({ credit1: { Visa: { a: 1, b: 1 } } });
    odd.cardPresent.get('credit1')!.get('Visa')!.labels = ['constructor', 'toString'];
    const r = resolveSplit(card(10_000, 'Visa'), rates(), odd, recipients);
    expect(r.shares.map((s) => s.recipient)).toEqual([null, null]);
  });

  it('resolves with no split plan: the fee only', () => {
    const r = resolveSplit(card(10_000, 'Visa'), rates(), null);
    expect(r).toEqual({
      fee: { units: 29_900, fixed: 50, amount: 349 },
      shares: [],
      developerAmount: 0,
      participantsAmount: 0,
      sellerNet: 9_651,
    });
  });

  it('sends Programador nowhere when the plan has no automatic developer fee', () => {
    const r = resolveSplit(card(10_000, 'Visa'), rates(), { ...splits(), automaticDeveloperFee: false }, recipients);
    expect(r.shares[0]).toMatchObject({ label: 'Programador', recipient: null });
  });
});

describe('split resolution properties', () => {
  const label = fc.constantFrom('Programador', 'Master', 'Agente', 'Sub1', 'Sub2', 'Sub3');
  const cellArb = fc
    .uniqueArray(fc.tuple(label, fc.integer({ min: 0, max: 400_000 })), { selector: ([l]) => l, maxLength: 6 })
    .filter((entries) => entries.reduce((a, [, u]) => a + u, 0) <= FULL_PERCENT_UNITS)
    .map((entries) => Object.fromEntries(entries.map(([l, u]) => [l, (u / 10_000).toFixed(4)])));
  const feeArb = fc
    .record({ percentage: fc.integer({ min: 0, max: 100_000 }), fixed: fc.integer({ min: 0, max: 500 }) })
    .map((f) => ({
      percentage: (f.percentage / 10_000).toFixed(4),
      fixed: (f.fixed / 100).toFixed(2),
    }));
  const inputArb = fc.record({
    amount: fc.integer({ min: 1, max: MAX_AMOUNT_CENTS }),
    installments: fc.integer({ min: 1, max: 12 }),
    brand: fc.constantFrom('Visa', 'MasterCard', 'Elo'),
    entryMode: fc.constantFrom('card_present' as const, 'online' as const),
  });

  it('always sums fee, shares and net to the amount, each share within a cent of its exact value, never negative, deterministically', () => {
    fc.assert(
      fc.property(cellArb, cellArb, feeArb, inputArb, (cardCell, onlineCell, feeCell, input) => {
        const key = `credit${input.installments}`;
        const table = fees({ [key]: { [W]: feeCell } });
        const compiled = plan({ [key]: { [input.brand]: cardCell } }, { [key]: { [W]: onlineCell } });
        const request: ResolutionInput = { ...input, paymentType: 'credit' };
        let r;
        try {
          r = resolveSplit(request, table, compiled, recipients);
        } catch (error) {
          expect(error).toBeInstanceOf(ResolutionRefused);
          expect((error as ResolutionRefused).code).toBe('negative_seller_net');
          return;
        }
        const shares = r.shares.reduce((a, s) => a + s.amount, 0);
        expect(r.fee.amount + shares + r.sellerNet).toBe(input.amount);
        expect(r.developerAmount + r.participantsAmount).toBe(shares);
        for (const share of r.shares) {
          expect(share.amount).toBeGreaterThanOrEqual(0);
          expect(Math.abs(share.amount - (input.amount * share.units) / FULL_PERCENT_UNITS)).toBeLessThan(1);
        }
        expect(r.sellerNet).toBeGreaterThanOrEqual(0);
        expect(resolveSplit(request, table, compiled, recipients)).toEqual(r);
      }),
      { numRuns: 500 },
    );
  });
});
