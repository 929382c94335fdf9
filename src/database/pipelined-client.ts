import { Logger } from '@nestjs/common';
import { Query, Result, type ClientConfig, type FieldDef, type QueryResult } from 'pg';
import { QueryFailedError, type EntityManager } from 'typeorm';
import { DeadlineClient } from './pg-options';

const logger = new Logger('Database');

/**
 * The pg client of the service's pool (`pipeline: true`): it cuts the round trips and socket
 * writes of database transactions, which are most of what a request costs here (on the small
 * virtual machines this runs on, each write to a socket costs as much as the work around it).
 *
 * - **Lazy BEGIN.** `START TRANSACTION` is answered at once and sent on the wire together
 *   with the transaction's first statement (as Npgsql does); a transaction that ends before
 *   any statement sends nothing at all.
 * - **Deferred statements** (`deferStatement`): writes whose result the caller does not need
 *   (outbox events, e-mails, counters) are not waited for. They leave with the transaction's next
 *   statement, or with its COMMIT, which goes out right behind them and checks their outcome: if
 *   one failed, the server has rolled the whole transaction back and the commit throws that
 *   statement's error. A transaction of one deferred statement sends it alone: the server runs
 *   a lone statement as a transaction of its own.
 * - **One write per turn of the event loop:** statements issued in the same turn leave in one
 *   socket write.
 * - **Prepared statements:** a statement with parameters is parsed and planned once per
 *   connection (see `preparedName`), not at every execution, and the description of its rows is
 *   decoded once per connection too (see `RowShape`).
 *
 * - **Commit with the last statement** (`commitWithStatement`): a transaction whose last
 *   statement is known sends COMMIT right behind it, in the same write, so that the rows it
 *   locks are held only while the server runs it, never across a round trip to this process
 *   and back (under load, a turn of a busy event loop: every other transaction wanting those
 *   rows waits that long too). A transaction of that one statement sends it alone: the server
 *   runs a lone statement as a transaction of its own.
 *
 * A COMMIT that the server answers with ROLLBACK (the transaction was aborted by an error the
 * caller did not propagate) throws instead of passing for a commit.
 *
 * BEGIN sent ahead of the first statement is not in that statement's protocol sync: if BEGIN
 * alone failed, the statement would run on its own. On a live connection BEGIN fails only when
 * its own execution is cancelled, and this service never cancels a statement (a missed
 * deadline closes the connection instead, see DeadlineClient); should it ever happen, the
 * connection is closed at once and the transaction fails.
 */
export class PipelinedClient extends DeadlineClient {
  private readonly prepares: boolean;
  private beginPending = false;
  /** Deferred statements of a transaction that has sent nothing yet, held until it sends or ends. */
  private held: Array<[text: string, values: unknown[]]> = [];
  private deferred: Array<Promise<unknown>> = [];
  private deferredFailure: unknown = null;
  private corked = false;
  /** The COMMIT sent behind the transaction's last statement (commitWith), until the transaction ends. */
  private committing: Promise<QueryResult> | null = null;
  private readonly rowShapes = new Map<string, RowShape>();

  /** `preparedStatements: false` in the config: statements are not prepared (see `preparedName`). */
  constructor(config: ClientConfig & { preparedStatements?: boolean } = {}) {
    super(config);
    this.prepares = config.preparedStatements !== false;
  }

  override query(...args: unknown[]): any {
    const text = typeof args[0] === 'string' ? args[0] : undefined;
    const promised = args.length <= 2 && typeof args[args.length - 1] !== 'function';
    if (promised && text !== undefined) {
      if (text === 'START TRANSACTION' || text === 'BEGIN') {
        this.beginPending = true;
        this.held = [];
        this.deferred = [];
        this.deferredFailure = null;
        this.committing = null;
        return Promise.resolve(emptyResult('BEGIN'));
      }
      if (text === 'COMMIT' || text === 'ROLLBACK') {
        return this.committing ? this.endCommitted(text) : this.end_(text);
      }
    }
    if (this.committing) return Promise.reject(afterTheLastStatement());
    this.coalesceWrites();
    this.sendPendingBegin();
    return this.run(args);
  }

  /** Executes a statement, its failure reported as the one that matters (see `query`). */
  private run(args: unknown[]): any {
    const result = this.execute(args);
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      const code = (error as { code?: string }).code;
      // The table changed shape under a prepared statement (a migration applied while this
      // process runs): this call fails, the statement is prepared afresh from the next one on.
      if (code === '0A000' && typeof args[0] === 'string') replan(args[0]);
      // A statement behind a failed deferred one fails with "current transaction is aborted":
      // the error that matters is the deferred statement's.
      throw code === '25P02' && this.deferredFailure ? this.deferredFailure : error;
    });
  }

  /** Sends a statement of the open transaction without waiting for it; see the class comment. */
  defer(text: string, values: unknown[]): void {
    if (this.committing) {
      // It would run on its own, outside the committed transaction: the transaction's end fails.
      this.committing = this.committing.then(() => Promise.reject(afterTheLastStatement()));
      this.committing.catch(() => undefined);
      return;
    }
    if (this.beginPending) {
      this.held.push([text, values]);
      return;
    }
    this.coalesceWrites();
    this.sendDeferred(text, values);
  }

  private sendDeferred(text: string, values: unknown[]): void {
    // The failure is recorded on the driver's own promise, ahead of the statements sent after
    // this one, whose errors (in the same read) are mapped to it.
    const sent = this.execute([text, values]) as Promise<unknown>;
    this.deferred.push(
      sent.catch((error: unknown) => {
        if ((error as { code?: string }).code === '0A000') replan(text);
        this.deferredFailure ??= error;
      }),
    );
  }

  /**
   * Sends the transaction's last statement and COMMIT behind it in the same write; answers the
   * statement's result. The caller's COMMIT (or ROLLBACK, when its work failed after this
   * statement) then answers that COMMIT's outcome instead of sending anything: if the statement
   * failed, the server has rolled the transaction back; if it succeeded, the transaction has
   * committed, whatever the caller does next.
   */
  commitWith(text: string, values: unknown[]): Promise<QueryResult> {
    if (this.committing) return Promise.reject(afterTheLastStatement());
    if (this.beginPending && this.held.length === 0) {
      // The transaction's first statement is its last: sent alone, it is a transaction of its
      // own, which the server commits at the statement's end (deferred constraints checked then,
      // their failure reported as the statement's); neither BEGIN nor COMMIT travels.
      this.beginPending = false;
      this.coalesceWrites();
      const alone = this.run([text, values]) as Promise<QueryResult>;
      this.committing = alone.then(() => emptyResult('COMMIT'));
      this.committing.catch(() => undefined); // read by endCommitted
      return alone;
    }
    const result = this.query(text, values) as Promise<QueryResult>;
    this.committing = this.end_('COMMIT');
    this.committing.catch(() => undefined); // read by endCommitted
    return result;
  }

  private async endCommitted(command: 'COMMIT' | 'ROLLBACK'): Promise<QueryResult> {
    const committing = this.committing!;
    this.committing = null;
    if (command === 'COMMIT') return committing;
    // The caller's work failed after its last statement: when that statement failed too, the
    // server rolled back; when it did not, the change stands and the caller reports its error
    // (a defect of the caller: nothing may fail after a last statement).
    return committing.then(
      () => {
        logger.error('A transaction committed with its last statement, then its work failed: the change stands');
        return emptyResult('ROLLBACK');
      },
      () => emptyResult('ROLLBACK'),
    );
  }

  private async end_(command: 'COMMIT' | 'ROLLBACK'): Promise<QueryResult> {
    if (this.beginPending) {
      const held = this.held;
      if (command === 'ROLLBACK' || held.length <= 1) {
        this.beginPending = false;
        this.held = [];
        // Nothing was sent: there is nothing to end (a rollback drops the held statements).
        if (command === 'ROLLBACK' || held.length === 0) return emptyResult(command);
        // A transaction of one statement: sent alone, the server runs it as a transaction of its
        // own; its failure is the commit's.
        this.coalesceWrites();
        await this.run(held[0]);
        return emptyResult('COMMIT');
      }
      this.coalesceWrites();
      this.sendPendingBegin();
    }
    const deferred = this.deferred;
    this.deferred = [];
    let ended: QueryResult;
    try {
      this.coalesceWrites();
      ended = await (this.send(command) as Promise<QueryResult>);
    } finally {
      await Promise.all(deferred);
    }
    const failure = this.deferredFailure;
    this.deferredFailure = null;
    if (command === 'COMMIT') {
      if (failure) throw failure;
      if (ended.command === 'ROLLBACK') {
        throw new Error('COMMIT of an aborted transaction: the server rolled it back (a failed statement was ignored)');
      }
    }
    return ended;
  }

  /** Sends a statement: as a prepared statement when it has parameters (see `preparedName`), else as it is. */
  private execute(args: unknown[]): unknown {
    const [text, values, callback] = args;
    const name = this.prepares ? preparedName(text, values) : undefined;
    if (name === undefined) return this.send(...args);
    const query = new PreparedQuery(name, text as string, values as unknown[], this.rowShapes);
    if (typeof callback === 'function') return this.send(query, callback);
    return new Promise((resolve, reject) =>
      this.send(query, (error: unknown, result: unknown) => {
        if (!error) return resolve(result);
        // As pg does for its own promises: the stack leads back to the caller, not to the socket read.
        if (error instanceof Error) Error.captureStackTrace(error);
        reject(error);
      }),
    );
  }

  private send(...args: unknown[]): unknown {
    return (super.query as (...a: unknown[]) => unknown).apply(this, args);
  }

  /** BEGIN, then the deferred statements held until the transaction sends something. */
  private sendPendingBegin(): void {
    if (!this.beginPending) return;
    this.beginPending = false;
    (this.send('BEGIN') as Promise<unknown>).catch((error: unknown) => {
      this.deferredFailure ??= error;
      const connection = (this as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection;
      connection?.stream?.destroy(error as Error);
    });
    const held = this.held;
    this.held = [];
    for (const [text, values] of held) this.sendDeferred(text, values);
  }

  /** Holds the socket's writes until the end of this turn of the event loop, then sends them in one write. */
  private coalesceWrites(): void {
    if (this.corked) return;
    const stream = (this as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection
      ?.stream;
    if (!stream?.cork || !stream.uncork) return;
    this.corked = true;
    stream.cork();
    setImmediate(() => {
      this.corked = false;
      stream.uncork!();
    });
  }
}

/**
 * The comment (TypeORM's `.comment(PLANNED_PER_EXECUTION)`) that marks a statement whose best plan
 * depends on its values, such as a range filter on a column the result is not ordered by: it goes
 * unnamed, so that PostgreSQL plans it with the values of each execution. Named, it would run on a
 * generic plan after its fifth execution, one blind to how many rows the values select.
 */
export const PLANNED_PER_EXECUTION = 'planned per execution';
const PLANNED_PER_EXECUTION_PREFIX = `/* ${PLANNED_PER_EXECUTION} */`;

const statementNames = new Map<string, string>();
const MAX_PREPARED = 1000;
let namesGiven = 0;

/**
 * The name of the prepared statement a statement with parameters goes as, parsed and planned once
 * per connection (the first MAX_PREPARED distinct texts of the process, and none marked
 * PLANNED_PER_EXECUTION; the rest go unnamed). A
 * transaction-pooling proxy must keep prepared statements (PgBouncer 1.21+ with
 * max_prepared_statements), else DATABASE_PREPARED_STATEMENTS=false turns them off.
 */
function preparedName(text: unknown, values: unknown): string | undefined {
  if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return undefined;
  if (text.startsWith(PLANNED_PER_EXECUTION_PREFIX)) return undefined;
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED) return undefined;
    name = `s${namesGiven++}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * What pg decodes from a statement's row description (RowDescription): the value parser of each
 * column and an empty row with every column. pg builds that row afresh for each result, and for
 * a wide row it is the dearest step of a read: about 20 µs for the 50 columns of a transaction
 * with its split rules, most of it copying an object built key by key, which V8 copies slowly.
 * A prepared statement describes the same rows every time, so each connection decodes it once
 * and reuses it. (When its tables change shape the server refuses the next execution with 0A000
 * and `replan` gives the text a new name; the comparison of descriptions is only a guard.) This
 * reaches into pg's Query and Result (`DecodedResult`); the e2e test of this client checks the
 * rows, that a description is decoded once and that its empty row is reused, so a pg release
 * that moves those members fails it.
 */
interface RowShape {
  fields: FieldDef[];
  parsers: unknown[];
  emptyRow: object;
}

/** pg's Result, with the members that hold the decoded row description (pg/lib/result.js). */
interface DecodedResult {
  fields: FieldDef[];
  _parsers: unknown[];
  _prebuiltEmptyResultObject: object;
  addFields(fields: FieldDef[]): void;
}

/** An execution of a named prepared statement whose result reuses the connection's `RowShape` of it. */
class PreparedQuery extends Query {
  constructor(name: string, text: string, values: unknown[], shapes: Map<string, RowShape>) {
    super(text, values); // the text as a string: pg copies a config object, property by property
    const query = this as unknown as { name: string; _result: Result; _results: Result };
    query.name = name;
    query._result = query._results = new ShapedResult(name, shapes);
  }
}

/** pg's Result, decoding a row description only when its statement's `RowShape` on this connection differs. */
class ShapedResult extends Result implements Pick<DecodedResult, 'addFields'> {
  constructor(
    private readonly statement: string,
    private readonly shapes: Map<string, RowShape>,
  ) {
    // Rows as objects; the client gives the result its connection's types when it takes the query.
    super('object', undefined as never);
  }

  addFields(fields: FieldDef[]): void {
    const result = this as unknown as DecodedResult;
    const known = this.shapes.get(this.statement);
    if (known && sameFields(known.fields, fields)) {
      // The first description's column names: V8 has hashed them, so each row's keys are found at once.
      result.fields = known.fields;
      result._parsers = known.parsers;
      result._prebuiltEmptyResultObject = known.emptyRow;
      return;
    }
    (Result.prototype as unknown as DecodedResult).addFields.call(this, fields);
    this.shapes.set(this.statement, { fields, parsers: result._parsers, emptyRow: result._prebuiltEmptyResultObject });
  }
}

function sameFields(a: FieldDef[], b: FieldDef[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i].name !== b[i].name || a[i].dataTypeID !== b[i].dataTypeID || a[i].format !== b[i].format) return false;
  }
  return true;
}

/** A new name for a statement whose prepared plan no longer fits its tables: every connection parses it again. */
function replan(text: string): void {
  if (statementNames.has(text)) statementNames.set(text, `s${namesGiven++}`);
}

function afterTheLastStatement(): Error {
  return new Error('A statement after the last statement of a transaction, which has committed');
}

function emptyResult(command: string): QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}

const MORE_TO_WRITE = 'moreToWriteAfterWork';

/**
 * Marks the caller's transaction as one that writes more after its work's statements (the
 * request's answer, see requestTransaction): `commitWithStatement` then leaves the COMMIT to it.
 */
export function writesAfterWork(manager: EntityManager): void {
  manager.queryRunner!.data[MORE_TO_WRITE] = true;
}

/**
 * Runs the last statement of the caller's transaction and sends COMMIT with it (see
 * PipelinedClient.commitWith): nothing may be written in the transaction after it, and once it
 * succeeded the change has committed (or fails at COMMIT, which the transaction's end reports).
 * Answers the statement's rows. A transaction marked by `writesAfterWork`, a nested one, or one on
 * a connection that is not pipelined runs it as a plain statement and commits at its end as usual.
 */
export async function commitWithStatement<T>(manager: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  const runner = manager.queryRunner as (EntityManager['queryRunner'] & { transactionDepth?: number }) | undefined;
  if (!runner?.isTransactionActive) throw new Error('commitWithStatement runs inside a database transaction');
  const connection = (runner as unknown as { databaseConnection?: unknown }).databaseConnection;
  if (connection instanceof PipelinedClient && runner.transactionDepth === 1 && !runner.data[MORE_TO_WRITE]) {
    try {
      return (await connection.commitWith(text, values)).rows as T[];
    } catch (error) {
      throw new QueryFailedError(text, values, error as Error); // as TypeORM's own query reports it
    }
  }
  return (await runner.query(text, values, true)).records as T[];
}

/**
 * Runs a statement of the caller's transaction without waiting for its result: it is sent at
 * once and its outcome is checked at COMMIT (see PipelinedClient). Falls back to waiting when
 * the connection is not pipelined.
 */
export async function deferStatement(manager: EntityManager, text: string, values: unknown[]): Promise<void> {
  const runner = manager.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('deferStatement runs inside a database transaction');
  const connection = (runner as unknown as { databaseConnection?: unknown }).databaseConnection;
  if (connection instanceof PipelinedClient) connection.defer(text, values);
  else await manager.query(text, values);
}
