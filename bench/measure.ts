/**
 * Runs synchronous workloads in interleaved rounds (A, B, A, B, …) so that machine noise hits
 * each alike, and reports each one's median rate in operations per second.
 */
export function measure<K extends string>(
  workloads: Record<K, (i: number) => void>,
  options: { rounds: number; millisecondsPerRound: number },
): Record<K, number> {
  const names = Object.keys(workloads) as K[];
  for (const name of names) run(workloads[name], 100); // warm-up
  const rates = Object.fromEntries(names.map((n) => [n, [] as number[]])) as unknown as Record<K, number[]>;
  for (let round = 0; round < options.rounds; round++) {
    for (const name of names) rates[name].push(run(workloads[name], options.millisecondsPerRound));
  }
  return Object.fromEntries(names.map((n) => [n, median(rates[n])])) as Record<K, number>;
}

function run(work: (i: number) => void, milliseconds: number): number {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(milliseconds) * 1_000_000n;
  let i = 0;
  let now = start;
  while (now < deadline) {
    for (let k = 0; k < 256; k++) work(i++);
    now = process.hrtime.bigint();
  }
  return i / (Number(now - start) / 1e9);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function printTable(title: string, rows: Array<[string, number]>, unit = '/s'): void {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) {
    console.log(`  ${name.padEnd(width)}  ${Math.round(value).toLocaleString('en-US').padStart(12)}${unit}`);
  }
}

/** Prints a ratio with its target and whether this run meets it. */
export function printRatio(label: string, ratio: number, target: { atLeast: number } | { atMost: number }): void {
  const [sign, bound] = 'atLeast' in target ? ['>=', target.atLeast] : ['<=', target.atMost];
  const met = 'atLeast' in target ? ratio >= target.atLeast : ratio <= target.atMost;
  console.log(`  ${label}: ${ratio.toFixed(2)}   target ${sign} ${bound}: ${met ? 'met' : 'NOT met'}`);
}
