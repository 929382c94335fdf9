import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { DatabaseError, type ClientConfig } from 'pg';
import { QueryFailedError } from 'typeorm';
import { PipelinedClient } from './pipelined-client';

const logger = new Logger('Database');

/** Shared connections kept open beyond the pool (each a PostgreSQL backend that runs their statements in turn). */
export const SHARED_CONNECTIONS = 2;

/**
 * How long a statement on a shared connection waits for a lock. A read takes no row locks; it
 * waits only behind a schema change (a migration's ACCESS EXCLUSIVE lock), and meanwhile holds up
 * every statement queued behind it: it gives up soon instead (503, busy; the client retries).
 */
export const SHARED_LOCK_TIMEOUT_MS = 200;

/**
 * Shared connections ("lanes") for short reads by key outside any transaction, as Npgsql's
 * multiplexing: the hot reads of a record by its key (a transaction, an event with its ticket
 * types) go to one of `SHARED_CONNECTIONS` connections that every request shares, instead of each
 * taking a pooled connection of its own. Statements issued in the same turn of the event loop
 * leave in one socket write per lane (PipelinedClient), their answers come back in one read, and
 * PostgreSQL runs them one after the other on a backend that is already awake: under
 * concurrency, a read costs this process and PostgreSQL about half the CPU of a pooled one
 * (`npm run bench -- transactions`, part c). Each statement has its own protocol sync (its own
 * implicit transaction), so a failed one fails alone.
 *
 * Only for statements that are quick whatever the data (an index lookup by key): a lane runs its
 * statements in order, so a slow one would hold up those queued behind it, and so would a write,
 * whose commit waits for the disk (and for any lock on its row), except on connections whose
 * commits do not (COUNTER_CONNECTIONS: rate-limit counters, apart from the reads). Lists,
 * searches, writes and anything in a transaction use the pool.
 *
 * A lane whose connection fails (the database restarted, a network fault, a missed client
 * deadline: see DeadlineClient) fails the statements it carries, as a pooled connection would
 * (503), and once its failure is noticed the next statement opens a new one. Lanes open at their
 * first statement.
 */
export class SharedConnections implements OnApplicationShutdown {
  private readonly lanes: Lane[] = [];
  private closed = false;
  /** Rejected at shutdown: a statement still waiting for its connection then fails instead of waiting on. */
  private readonly stopped: Promise<never>;
  private stop!: (error: Error) => void;

  constructor(private readonly settings: ClientConfig & { preparedStatements?: boolean }) {
    this.stopped = new Promise<never>((_, reject) => (this.stop = reject));
    this.stopped.catch(() => undefined);
  }

  /** The rows of one statement, on the least busy lane; failures as TypeORM reports them (QueryFailedError). */
  async query<T = Record<string, unknown>>(text: string, values: unknown[]): Promise<T[]> {
    const lane = this.pick();
    lane.inFlight++;
    try {
      if (!lane.ready) await Promise.race([lane.connected, this.stopped]);
      return (await lane.client.query(text, values)).rows as T[];
    } catch (error) {
      throw error instanceof DatabaseError ? new QueryFailedError(text, values, error) : error;
    } finally {
      lane.inFlight--;
    }
  }

  /** For the metrics: connections open, and statements sent on them and not yet answered. */
  usage(): { open: number; inFlight: number } {
    return { open: this.lanes.length, inFlight: this.lanes.reduce((sum, lane) => sum + lane.inFlight, 0) };
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.stop(stopping());
    await Promise.all(this.lanes.splice(0).map((lane) => close(lane.client)));
  }

  private pick(): Lane {
    // The stopping service has drained its requests; a late statement is refused as the closed pool would be.
    if (this.closed) throw stopping();
    if (this.lanes.length < SHARED_CONNECTIONS) return this.open();
    let best = this.lanes[0];
    for (const lane of this.lanes) if (lane.inFlight < best.inFlight) best = lane;
    return best;
  }

  private open(): Lane {
    const client = new PipelinedClient({ ...this.settings, pipeline: true, lock_timeout: SHARED_LOCK_TIMEOUT_MS });
    const lane: Lane = { client, inFlight: 0, connected: client.connect(), ready: false };
    lane.connected.then(
      () => (lane.ready = true),
      () => undefined,
    );
    const retire = () => {
      const at = this.lanes.indexOf(lane);
      if (at < 0) return;
      this.lanes.splice(at, 1);
      void close(client);
    };
    // The statements it carries fail with the connection's error; the next one opens a new lane.
    lane.connected.catch(retire);
    client.on('error', (error: Error) => {
      logger.warn(`A shared connection failed (${error.message}); it is replaced at the next statement`);
      retire();
    });
    client.on('end', retire);
    this.lanes.push(lane);
    return lane;
  }
}

/** How long a closing connection gets to say goodbye to the server before its socket is dropped. */
const CLOSE_GRACE_MS = 1000;

/**
 * Ends a connection; one the server does not answer (a silent network, or still opening) is
 * dropped after CLOSE_GRACE_MS: pg's `end` waits for the server to close its side.
 */
async function close(client: PipelinedClient): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    client.end().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS))),
  ]);
  clearTimeout(timer);
  if (!ended) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** As the closed pool would refuse it: the database is unavailable to this process (503). */
function stopping(): Error {
  return new Error('Connection terminated: the service is stopping');
}

interface Lane {
  client: PipelinedClient;
  /** Statements sent and not yet answered (or waiting for the connection). */
  inFlight: number;
  connected: Promise<unknown>;
  /** Connected: statements go out without waiting for `connected`. */
  ready: boolean;
}
