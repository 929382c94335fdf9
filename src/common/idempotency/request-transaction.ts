import type { FastifyRequest } from 'fastify';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { writesAfterWork } from '../../database/pipelined-client';
import { currentRequest } from '../context/request-context';
import { ConflictError } from '../errors/api-error';

/**
 * The `Idempotency-Key` a request holds, put in the request's context by the idempotency
 * interceptor, so that the service's database transaction can record the answer with the change.
 */
export interface IdempotencyClaim {
  /** The record an earlier, interrupted attempt of this same request tied the key to (resume it). */
  readonly resumeOf: string | null;
  /** True once the answer was committed with the change: the interceptor writes nothing more. */
  answered: boolean;
  /** True when the answer is not final: the key stays open so that a retry resumes the record. */
  provisional: boolean;
  /** Writes `body` as the key's answer in the change's transaction (throws when the claim lapsed). */
  answer(manager: EntityManager, body: unknown): Promise<void>;
  /** Ties the key to a record in the transaction that writes it (throws when the claim lapsed). */
  tie(manager: EntityManager, resourceId: string): Promise<void>;
}

const claims = new WeakMap<FastifyRequest, IdempotencyClaim>();
const detached = new AsyncLocalStorage<true>();

export function attachClaim(request: FastifyRequest, claim: IdempotencyClaim): void {
  claims.set(request, claim);
}

function currentClaim(): IdempotencyClaim | undefined {
  if (detached.getStore()) return undefined;
  const request = currentRequest()?.request;
  return request ? claims.get(request) : undefined;
}

export function claimLapsed(): ConflictError {
  return new ConflictError(
    'idempotency_key_in_use',
    'Another request with this Idempotency-Key took it over after its lease ran out. Retry later.',
  );
}

/**
 * THE database transaction of a request-driven change: use it instead of a bare
 * `dataSource.transaction` in services.
 *
 *   return requestTransaction(this.dataSource, async (manager) => {
 *     ...change through repositories with `manager`...
 *     return view; // the response body, exactly as the controller answers it
 *   });
 *
 * When the request carries an `Idempotency-Key`, the value returned by `work` is recorded as
 * the key's answer (with the route's success status) inside the same transaction, before
 * commit: a crash leaves both the change and its answer, or neither. Only the first such
 * transaction of a request answers; that transaction is marked `writesAfterWork`, so that a
 * last statement (`commitWithStatement`) does not take the COMMIT along before the answer is
 * written. Outside a request (jobs, CLI, service tests) it is a plain
 * transaction.
 */
export async function requestTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  const claim = currentClaim();
  const answers = claim !== undefined && !claim.answered && !claim.provisional;
  const result = await dataSource.transaction(async (manager) => {
    if (answers) writesAfterWork(manager);
    const value = await work(manager);
    if (answers) await claim.answer(manager, value);
    return value;
  });
  if (answers) claim.answered = true;
  return result;
}

/**
 * For a change that spans more than one database transaction around an outside call (a charge):
 * ties the request's key to the record written first, in that record's transaction. A retry
 * after a crash then gets `resumedResource()` instead of creating a second record.
 */
export async function tieIdempotencyKey(manager: EntityManager, resourceId: string): Promise<void> {
  await currentClaim()?.tie(manager, resourceId);
}

/**
 * Runs `work` apart from the request's Idempotency-Key: for a change made on behalf of another
 * one (a checkout creating its charge), whose own answer is not the request's answer.
 */
export function outsideIdempotencyKey<T>(work: () => Promise<T>): Promise<T> {
  return detached.run(true, work);
}

/**
 * The request's Idempotency-Key itself, for a change whose record is written apart from it (a
 * signup: its first charge runs outsideIdempotencyKey, and that charge's settlement writes the
 * subscription): the caller ties it before the charge, answers it in the transaction that writes
 * the record, and sets `answered` once that transaction committed. Undefined outside a request.
 */
export function heldIdempotencyKey(): IdempotencyClaim | undefined {
  return currentClaim();
}

/** The record an interrupted earlier attempt of this same request tied its key to, if any. */
export function resumedResource(): string | null {
  return currentClaim()?.resumeOf ?? null;
}

/**
 * The answer about to be given is not final (a charge whose outcome the processor has not told):
 * it is not recorded, and a retry with the key resumes the record tied to it.
 */
export function keepIdempotencyKeyOpen(): void {
  const claim = currentClaim();
  if (claim) claim.provisional = true;
}
