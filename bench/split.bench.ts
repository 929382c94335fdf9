import { readFileSync } from 'node:fs';
import type { FieldErrors } from '../src/common/errors/api-error';
import { SAMPLE_RATE_PLANS_FILE } from '../src/config/paths';
import { readFeeTable } from '../src/split/fee-table';
import { resolveSplit, ResolutionInput, Recipients } from '../src/split/resolve';
import { CompiledPlanCache } from '../src/split/split-engine';
import { parseSplitDocument } from '../src/split/split-table';
import { measure, printTable } from './measure';

/**
 * Split resolution: the compiled engine (plans compiled once and cached, then a lookup and
 * integer arithmetic) against a naive resolver that parses the plan's JSON on every call.
 * Both run on one core in this process, interleaved, on the same 10,000 payments.
 */
export async function splitBenchmark(): Promise<void> {
  const sample = JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8'));
  const ratePlan = { id: 'rate-plan', updatedAt: new Date('2026-11-01T00:00:00Z'), fees: sample[0].fees };
  const brands = ['Visa', 'MasterCard', 'Elo', 'American Express', 'Hipercard', 'Todas as bandeiras %'];
  const table: Record<string, Record<string, Record<string, number>>> = {};
  for (let n = 1; n <= 12; n++) {
    table[`credit${n}`] = Object.fromEntries(
      brands.map((b, i) => [b, { Programador: 0.5, Master: 1 + n / 10, Agente: 0.25 * (i + 1) }]),
    );
  }
  table.debit1 = {
    Visa: { Master: 0.4 },
    'Todas as bandeiras %': { Master: 0.5 },
    PIX: { Master: 0.2 },
    Boleto: { Master: 0.3 },
  };
  const splitPlan = {
    id: 'split-plan',
    splitDetails: JSON.stringify(table),
    splitDetailsOnline: JSON.stringify(table).replace(/"Master":1/g, '"Master":2'),
    automaticDeveloperFee: true,
  };
  const recipients: Recipients = { developerAccount: 'developer', participants: { Master: 'master', Agente: 'agent' } };
  const storedFees = JSON.stringify(ratePlan.fees);

  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const inputs: ResolutionInput[] = Array.from({ length: 10_000 }, () => {
    const kind = random();
    const paymentType = kind < 0.6 ? 'credit' : kind < 0.8 ? 'debit' : kind < 0.95 ? 'pix' : 'boleto';
    return {
      amount: 1_000 + Math.floor(random() * 500_000),
      paymentType,
      installments: paymentType === 'credit' ? 1 + Math.floor(random() * 12) : 1,
      brand: brands[Math.floor(random() * 5)],
      entryMode: random() < 0.5 ? 'online' : 'card_present',
    };
  });

  const cache = new CompiledPlanCache();
  let sink = 0;
  const compiled = (i: number) => {
    const r = resolveSplit(inputs[i % inputs.length], cache.ratePlan(ratePlan), cache.splitPlan(splitPlan), recipients);
    sink += r.sellerNet;
  };
  const naive = (i: number) => {
    const errors: FieldErrors = {};
    const fees = readFeeTable(JSON.parse(storedFees), 'fees', errors);
    const plan = {
      automaticDeveloperFee: true,
      cardPresent: parseSplitDocument(splitPlan.splitDetails, 'split_details', errors).table,
      online: parseSplitDocument(splitPlan.splitDetailsOnline, 'split_details_online', errors).table,
    };
    const r = resolveSplit(inputs[i % inputs.length], fees, plan, recipients);
    sink += r.sellerNet;
  };

  const results = measure({ compiled, naive }, { rounds: 5, millisecondsPerRound: 600 });
  printTable('Split resolution, one core (resolutions per second; median of 5 interleaved rounds)', [
    ['compiled engine (cached plans)', results.compiled],
    ['naive (parses the plan JSON on every call)', results.naive],
  ]);
  const ratio = results.compiled / results.naive;
  console.log(`\nratio compiled / naive: ${ratio.toFixed(1)}x   (targets: >= 1,000,000/s and >= 20x)`);
  console.log(
    `compiled engine: ${results.compiled >= 1_000_000 ? 'meets' : 'MISSES'} the 1,000,000/s target; ratio ${ratio >= 20 ? 'meets' : 'MISSES'} 20x`,
  );
  if (sink === 42) console.log(''); // keeps the work observable
}
