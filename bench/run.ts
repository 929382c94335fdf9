import { baselineBenchmark } from './baseline.bench';
import { chargesBenchmark } from './charges.bench';
import { checkoutBenchmark } from './checkout.bench';
import { ledgerBenchmark } from './ledger.bench';
import { renewalsBenchmark } from './renewals.bench';
import { splitBenchmark } from './split.bench';
import { transactionsBenchmark } from './transactions.bench';
import { webhooksBenchmark } from './webhooks.bench';

/**
 * `npm run bench -- [name ...]`: runs the named benchmarks (all without a name). Each prints
 * figures measured side by side in one run, and their ratio: absolute numbers on a shared
 * machine mean little.
 */
const BENCHMARKS: Record<string, () => Promise<void>> = {
  split: splitBenchmark,
  transactions: transactionsBenchmark,
  ledger: ledgerBenchmark,
  charges: chargesBenchmark,
  checkout: checkoutBenchmark,
  renewals: renewalsBenchmark,
  webhooks: webhooksBenchmark,
  baseline: baselineBenchmark,
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !BENCHMARKS[name]);
  if (unknown.length > 0) {
    console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.exit(2);
  }
  for (const name of wanted.length > 0 ? wanted : Object.keys(BENCHMARKS)) {
    console.log(`\n=== ${name}`);
    await BENCHMARKS[name]();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
