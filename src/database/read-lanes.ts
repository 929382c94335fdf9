import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { DatabaseError, type ClientConfig } from 'pg';
import { QueryFailedError } from 'typeorm';
import { PipelinedClient } from './pipelined-client';

const logger = new Logger('Database');

/** Connections the lanes keep open, beyond the pool (each a PostgreSQL backend that runs their statements in turn). */
export const READ_LANES = 2;

/**
 * Shared connections for short reads outside any transaction (as Npgsql's multiplexing): the
 * point reads of hot GET routes (a transaction by its id) go to one of `READ_LANES` connections
 * that every request shares, instead of each taking a pooled connection of its own. Reads issued
 * in the same turn of the event loop leave in one socket write per lane (PipelinedClient), their
 * answers come back in one read, and PostgreSQL runs them one after the other on a backend that
 * is already awake: under concurrency, a read costs this process and PostgreSQL about half the
 * CPU of a pooled one (`npm run bench -- transactions`). Each statement has its own protocol
 * sync, so a failed one fails alone.
 *
 * Only for statements that are quick whatever the data (an index lookup by key): a lane runs its
 * statements in order, so a slow one would hold up the reads queued behind it. Lists, searches
 * and anything in a transaction use the pool.
 *
 * A lane whose connection fails (the database restarted, a network fault, a missed client
 * deadline: see DeadlineClient) fails the reads it carries, as a pooled connection would (503),
 * and once its failure is noticed the next read opens a new one. Lanes open at their first read.
 */
export class ReadLanes implements OnApplicationShutdown {
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
    // The stopping service has drained its requests; a late read is refused as the closed pool would be.
    if (this.closed) throw new Error('Connection terminated: the service is stopping');
    if (this.lanes.length < READ_LANES) return this.open();
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
    // The reads it carries fail with the connection's error; the next read opens a new lane.
    lane.connected.catch(retire);
    client.on('error', (error: Error) => {
      logger.warn(`A shared read connection failed (${error.message}); it is replaced at the next read`);
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
