import { Client, type ClientConfig, type PoolConfig } from 'pg';

/**
 * Connection settings every PostgreSQL connection of the service uses, so that a database that
 * stops answering (a network partition drops packets: nothing is refused, nothing arrives) makes
 * requests fail within seconds with 503, and the pools heal by themselves once it answers again.
 */
export interface DatabaseTimeouts {
  /** Seconds a statement may run: the server cancels it (statement_timeout) and the client gives up shortly after. */
  queryTimeoutSeconds: number;
}

/** Opening a connection, or waiting for one from a full pool. */
export const CONNECT_TIMEOUT_MS = 5000;
/** An idle pooled connection is closed after this long. */
export const IDLE_TIMEOUT_MS = 30_000;
/** TCP keepalive probes start after this much silence, so that a dead peer is noticed on idle connections. */
const KEEPALIVE_DELAY_MS = 10_000;
/** The client's own deadline runs this long past the server's statement_timeout, which normally answers first. */
const CLIENT_DEADLINE_MARGIN_MS = 2000;

/** For single connections opened at start-up (migrations, readiness wait): bounded connect, keepalive. */
export function connectionOptions(databaseUrl: string, applicationName: string): ClientConfig {
  return {
    connectionString: databaseUrl,
    application_name: applicationName,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  };
}

/** For connection pools (TypeORM, pg-boss): the above, plus statement, client and idle deadlines. */
export function poolOptions(timeouts: DatabaseTimeouts): PoolConfig {
  const statementMs = timeouts.queryTimeoutSeconds * 1000;
  return {
    Client: DeadlineClient,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    statement_timeout: statementMs,
    idle_in_transaction_session_timeout: 60_000,
    lock_timeout: 5000,
    query_timeout: statementMs + CLIENT_DEADLINE_MARGIN_MS,
  };
}

/**
 * A pg client that closes its connection when a query misses the client deadline
 * (`query_timeout`): with the database silent, the connection is unusable and the pool must
 * not hand it out again (TypeORM returns clients to the pool without the error). Closing it
 * makes the pool drop it and open a fresh one on the next request.
 */
export class DeadlineClient extends Client {
  override query(...args: unknown[]): any {
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (error: unknown, ...rest: unknown[]) => void;
      args[last] = (error: unknown, ...rest: unknown[]) => {
        this.closeOnDeadline(error);
        callback(error, ...rest);
      };
    }
    const result = (super.query as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) result.catch((error: unknown) => this.closeOnDeadline(error));
    return result;
  }

  private closeOnDeadline(error: unknown): void {
    if ((error as Error | undefined)?.message !== 'Query read timeout') return;
    const connection = (this as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection;
    connection?.stream?.destroy(error as Error);
  }
}
