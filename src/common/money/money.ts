/**
 * The one money helper. Money is integer cents inside the service and a decimal string in
 * BRL with two decimals outside ("150.00"). Nothing else does arithmetic on money.
 *
 * Cents are JavaScript integers: the largest amount (10,000,000.00 = 1e9 cents) times the
 * largest percentage unit (1e6) stays below 2^53, so every product here is exact.
 */
export type Cents = number;

export const MAX_AMOUNT_CENTS: Cents = 1_000_000_000;
/** Percentages carry at most 4 decimals: 100% is 1,000,000 units. */
export const PERCENT_SCALE = 10_000;
export const FULL_PERCENT_UNITS = 100 * PERCENT_SCALE;

const MONEY_PATTERN = /^(0|[1-9]\d{0,7})(?:\.(\d{1,2}))?$/;
const PERCENT_PATTERN = /^(0|[1-9]\d{0,2})(?:\.(\d{1,4}))?$/;

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export interface MoneyRules {
  /** Accept "0" / "0.00" (default: amounts must be positive). */
  allowZero?: boolean;
}

/** Checks a money input of the API: a decimal string with at most two decimals, within range. */
export function checkMoney(input: unknown, rules: MoneyRules = {}): Checked<Cents> {
  const shape = 'must be a decimal string with at most two decimals, such as "150.00"';
  if (typeof input !== 'string') return { ok: false, message: shape };
  const match = MONEY_PATTERN.exec(input);
  if (!match) return { ok: false, message: moneyShapeProblem(input) ?? shape };
  const cents = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  if (cents > MAX_AMOUNT_CENTS) return { ok: false, message: 'must be at most "10000000.00"' };
  if (cents === 0 && !rules.allowZero) return { ok: false, message: 'must be greater than zero' };
  return { ok: true, value: cents };
}

/** What is wrong with digits that are not money: the one precise reason, or null for anything else. */
function moneyShapeProblem(input: string): string | null {
  const digits = /^(\d+)(?:\.(\d+))?$/.exec(input);
  if (!digits) return null;
  const [, whole, decimals = ''] = digits;
  if (decimals.length > 2) return 'must have at most two decimals, such as "150.00"';
  if (whole.length > 1 && whole.startsWith('0')) return 'must be written without leading zeros, such as "150.00"';
  return 'must be at most "10000000.00"';
}

/** Formats cents as the API's decimal string: 15050 → "150.50", -5 → "-0.05". */
export function formatMoney(cents: Cents): string {
  assertCents(cents);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Reads a bigint column value (the driver returns a string) as cents. */
export function centsFromDb(value: string | number | bigint): Cents {
  const cents = Number(value);
  assertCents(cents);
  return cents;
}

/**
 * Checks a percentage input: a decimal string or a JSON number, 0 to 100, at most 4
 * decimals. Returns integer units (1% = 10,000 units).
 */
export function checkPercentage(input: unknown): Checked<number> {
  const message = 'must be a number between 0 and 100 with at most 4 decimals';
  const text = typeof input === 'number' ? String(input) : typeof input === 'string' ? input : null;
  const match = PERCENT_PATTERN.exec(text ?? '');
  if (!match) return { ok: false, message };
  const units = Number(match[1]) * PERCENT_SCALE + Number((match[2] ?? '').padEnd(4, '0'));
  if (units > FULL_PERCENT_UNITS) return { ok: false, message };
  return { ok: true, value: units };
}

/** Formats percentage units as a decimal string without trailing zeros: 7500 → "0.75". */
export function formatPercentage(units: number): string {
  const whole = Math.trunc(units / PERCENT_SCALE);
  const fraction = String(units % PERCENT_SCALE)
    .padStart(4, '0')
    .replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/** round_half_up(amount × percentage / 100), exactly, for non-negative cents and units. */
export function percentOf(amount: Cents, units: number): Cents {
  return Math.floor((amount * units + FULL_PERCENT_UNITS / 2) / FULL_PERCENT_UNITS);
}

/**
 * Splits `total` cents in proportion to non-negative integer `weights` by the largest
 * remainder method: each part is the floor of its exact share, and the cents left over go
 * one each to the largest remainders, ties to the earlier weight. The parts sum to `total`.
 */
export function apportion(total: Cents, weights: readonly number[]): Cents[] {
  assertCents(total);
  if (total < 0) throw new RangeError('apportion() needs a non-negative total');
  const sum = weights.reduce((acc, w) => acc + w, 0);
  if (sum === 0) {
    if (total !== 0) throw new RangeError('apportion() needs a positive weight for a non-zero total');
    return weights.map(() => 0);
  }
  if (!Number.isSafeInteger(total * sum)) throw new RangeError('apportion() operands too large');
  return roundToTotal(
    weights.map((w) => total * w),
    sum,
    total,
  );
}

/**
 * Rounds exact amounts `numerators[i] / denominator` (in cents) to whole cents that sum to
 * `total`: each takes its floor, and the cents still missing go one each to the largest
 * remainders, ties to the earlier one. `total` must lie between the sum of the floors and
 * that sum plus the number of parts, so every part ends within one cent of its exact value.
 */
export function roundToTotal(numerators: readonly number[], denominator: number, total: Cents): Cents[] {
  const parts = numerators.map((n) => Math.floor(n / denominator));
  const remainders = numerators.map((n, i) => n - parts[i] * denominator);
  const given = parts.reduce((sum, part) => sum + part, 0);
  let left = total - given;
  if (left < 0 || left > numerators.length) throw new RangeError('roundToTotal(): total out of reach of the parts');
  // Largest remainders first; the sort is stable, so ties keep the earlier part first.
  const order = remainders.map((_, i) => i).sort((a, b) => remainders[b] - remainders[a]);
  for (let k = 0; left > 0; k++, left--) parts[order[k]] += 1;
  return parts;
}

function assertCents(cents: number): void {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`Not an integer amount of cents: ${cents}`);
}
