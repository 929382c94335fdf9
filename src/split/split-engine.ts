import type { FieldErrors } from '../common/errors/api-error';
import { FeeCell, readFeeTable } from './fee-table';
import { CompiledSplitPlan } from './resolve';
import { parseSplitDocument } from './split-table';
import { Table } from './table';

export interface SplitPlanSource {
  id: string;
  splitDetails: string;
  splitDetailsOnline: string;
  automaticDeveloperFee: boolean;
}

export interface RatePlanSource {
  id: string;
  updatedAt: Date;
  fees: unknown;
}

/**
 * Compiles plans once and keeps them: split plans by id (they are immutable), rate plans by
 * id and version (the sync routine may update them). Resolving is then a lookup and integer
 * arithmetic. Plain TypeScript; the Nest service only holds one instance.
 */
export class CompiledPlanCache {
  private readonly splitPlans = new Map<string, CompiledSplitPlan>();
  private readonly ratePlans = new Map<string, Table<FeeCell>>();

  constructor(private readonly capacity = 2_000) {}

  splitPlan(source: SplitPlanSource): CompiledSplitPlan {
    let compiled = this.splitPlans.get(source.id);
    if (!compiled) {
      compiled = compileSplitPlan(source);
      remember(this.splitPlans, source.id, compiled, this.capacity);
    }
    return compiled;
  }

  ratePlan(source: RatePlanSource): Table<FeeCell> {
    const key = `${source.id}@${source.updatedAt.getTime()}`;
    let compiled = this.ratePlans.get(key);
    if (!compiled) {
      compiled = compileFees(source.fees);
      remember(this.ratePlans, key, compiled, this.capacity);
    }
    return compiled;
  }
}

export function compileSplitPlan(source: Omit<SplitPlanSource, 'id'>): CompiledSplitPlan {
  const errors: FieldErrors = {};
  const cardPresent = parseSplitDocument(source.splitDetails, 'split_details', errors).table;
  const online = parseSplitDocument(source.splitDetailsOnline, 'split_details_online', errors).table;
  if (Object.keys(errors).length > 0) throw new Error(`A stored split plan does not parse: ${JSON.stringify(errors)}`);
  return { automaticDeveloperFee: source.automaticDeveloperFee, cardPresent, online };
}

export function compileFees(fees: unknown): Table<FeeCell> {
  const errors: FieldErrors = {};
  const table = readFeeTable(fees, 'fees', errors);
  if (Object.keys(errors).length > 0) throw new Error(`A stored rate plan does not parse: ${JSON.stringify(errors)}`);
  return table;
}

function remember<V>(cache: Map<string, V>, key: string, value: V, capacity: number): void {
  if (cache.size >= capacity) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}
