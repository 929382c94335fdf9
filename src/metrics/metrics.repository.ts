import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface OutboxBacklog {
  /** Events written but not dispatched yet. */
  pending: number;
  /** Age in seconds of the oldest of them (0 when none). */
  oldestAgeSeconds: number;
}

/** What the metrics read from the database at scrape time (index-backed, cheap queries only). */
@Injectable()
export class MetricsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async outboxBacklog(): Promise<OutboxBacklog> {
    const [row]: Array<{ pending: number; oldest_age: number }> = await this.dataSource.query(
      `SELECT count(*)::int AS pending,
              coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_age
       FROM outbox_events WHERE dispatched_at IS NULL`,
    );
    return { pending: row.pending, oldestAgeSeconds: row.oldest_age };
  }
}
