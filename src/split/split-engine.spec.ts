import { CompiledPlanCache, compileFees, compileSplitPlan } from './split-engine';

const splitSource = (id: string, details = '{"credit1": {"Visa": {"Master": 1}}}') => ({
  id,
  splitDetails: details,
  splitDetailsOnline: '{}',
  automaticDeveloperFee: true,
});
const rateSource = (id: string, updatedAt: Date) => ({
  id,
  updatedAt,
  fees: { credit1: { Visa: { percentage: '2.99', fixed: '0.50' } } },
});

describe('compiled plan cache', () => {
  it('compiles a split plan once per id', () => {
    const cache = new CompiledPlanCache();
    const first = cache.splitPlan(splitSource('a'));
    expect(cache.splitPlan(splitSource('a'))).toBe(first);
    expect(cache.splitPlan(splitSource('b'))).not.toBe(first);
    expect(first.cardPresent.get('credit1')!.get('Visa')).toEqual({
      labels: ['Master'],
      units: [10_000],
      totalUnits: 10_000,
    });
  });

  it('compiles a rate plan once per id and version', () => {
    const cache = new CompiledPlanCache();
    const first = cache.ratePlan(rateSource('r', new Date(1000)));
    expect(cache.ratePlan(rateSource('r', new Date(1000)))).toBe(first);
    expect(cache.ratePlan(rateSource('r', new Date(2000)))).not.toBe(first);
    expect(first.get('credit1')!.get('Visa')).toEqual({ units: 29_900, fixed: 50 });
  });

  it('keeps at most its capacity, dropping the oldest', () => {
    const cache = new CompiledPlanCache(2);
    const a = cache.splitPlan(splitSource('a'));
    const b = cache.splitPlan(splitSource('b'));
    const c = cache.splitPlan(splitSource('c'));
    expect(cache.splitPlan(splitSource('c'))).toBe(c);
    expect(cache.splitPlan(splitSource('b'))).toBe(b);
    expect(cache.splitPlan(splitSource('a'))).not.toBe(a);

    const rates = new CompiledPlanCache(2);
    const r1 = rates.ratePlan(rateSource('1', new Date(0)));
    rates.ratePlan(rateSource('2', new Date(0)));
    rates.ratePlan(rateSource('3', new Date(0)));
    expect(rates.ratePlan(rateSource('1', new Date(0)))).not.toBe(r1);
  });
});

describe('compiling stored plans', () => {
  it('keeps the developer-fee flag and both tables', () => {
    const compiled = compileSplitPlan({
      splitDetails: '{"credit1": {"Visa": {"A": 1}}}',
      splitDetailsOnline: '{"debit1": {"PIX": {"B": 2}}}',
      automaticDeveloperFee: false,
    });
    expect(compiled.automaticDeveloperFee).toBe(false);
    expect([...compiled.cardPresent.keys()]).toEqual(['credit1']);
    expect([...compiled.online.keys()]).toEqual(['debit1']);
  });

  it('fails loudly on a stored plan that does not parse, naming the field', () => {
    expect(() => compileSplitPlan({ ...splitSource('x'), splitDetails: '{"credit0": {}}' })).toThrow(
      'A stored split plan does not parse: {"split_details.credit0"',
    );
    expect(() => compileSplitPlan({ ...splitSource('x'), splitDetailsOnline: 'nope' })).toThrow(
      /A stored split plan does not parse: \{"split_details_online"/,
    );
    expect(() => compileFees({ credit1: { Visa: { percentage: 'x', fixed: '0' } } })).toThrow(
      'A stored rate plan does not parse: {"fees.credit1.Visa.percentage"',
    );
    expect(compileFees({})).toEqual(new Map());
  });
});
