import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { DatabaseError, type ClientConfig } from 'pg';
import { QueryFailedError } from 'typeorm';
import { PipelinedClient } from './pipelined-client';

const logger = new Logger('Database');

/** Shared connections kept open beyond the pool (each a PostgreSQL backend that runs their statements in turn). */
export const SHARED_CONNECTIONS = 2;

/**
 * Shared connections ("lanes") for short statements by key outside any transaction, as Npgsql's
 * multiplexing: the hot reads of a record by its key (a transaction, an event with its ticket
 * types) and the rate-limit counter go to one of `SHARED_CONNECTIONS` connections that every
 * request shares, instead of each taking a pooled connection of its own. Statements issued in
 * the same turn of the event loop leave in one socket write per lane (PipelinedClient), their
 * answers come back in one read, and PostgreSQL runs them one after the other on a backend that
 * is already awake: under concurrency, a statement costs this process and PostgreSQL about half
 * the CPU of a pooled one (`npm run bench -- transactions`, part c). Each statement has its own
 * protocol sync (its own implicit transaction), so a failed one fails alone.
 *
 * Only for statements that are quick whatever the data (an index lookup or a one-row upsert by
 * key, on rows no long transaction locks): a lane runs its statements in order, so a slow one
 * would hold up those queued behind it. Lists, searches and anything in a transaction use the pool.
 *
 * A lane whose connection fails (the database restarted, a network fault, a missed client
 * deadline: see DeadlineClient) fails the statements it carries, as a pooled connection would
 * (503), and once its failure is noticed the next statement opens a new one. Lanes open at their
 * first statement.
 */
export class SharedConnections implements OnApplicationShutdown {
  private readonly lanes: Lane[] = [];
  private closed = false;

  constructor(private readonly settings: ClientConfig & { preparedStatements?: boolean }) {}

  /** The rows of one statement, on the least busy lane; failures as TypeORM reports them (QueryFailedError). */
  async query<T = Record<string, unknown>>(text: string, values: unknown[]): Promise<T[]> {
    const lane = this.pick();
    lane.inFlight++;
    try {
      await lane.connected;
      return (await lane.client.query(text, values)).rows as T[];
    } catch (error) {
      throw error instanceof DatabaseError ? new QueryFailedError(text, values, error) : error;
    } finally {
      lane.inFlight--;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await Promise.all(this.lanes.splice(0).map((lane) => lane.client.end().catch(() => undefined)));
  }

  private pick(): Lane {
    // The stopping service has drained its requests; a late statement is refused as the closed pool would be.
    if (this.closed) throw new Error('Connection terminated: the service is stopping');
    if (this.lanes.length < SHARED_CONNECTIONS) return this.open();
    let best = this.lanes[0];
    for (const lane of this.lanes) if (lane.inFlight < best.inFlight) best = lane;
    return best;
  }

  private open(): Lane {
    const client = new PipelinedClient({ ...this.settings, pipeline: true });
    const lane: Lane = { client, inFlight: 0, connected: client.connect() };
    const retire = () => {
      const at = this.lanes.indexOf(lane);
      if (at < 0) return;
      this.lanes.splice(at, 1);
      client.end().catch(() => undefined);
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

interface Lane {
  client: PipelinedClient;
  /** Statements sent and not yet answered (or waiting for the connection). */
  inFlight: number;
  connected: Promise<unknown>;
}
