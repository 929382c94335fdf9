import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An Idempotency-Key's recorded answer keeps its body as it was sent (`json`, the text) instead
 * of as `jsonb`, which orders an object's keys by length: a replay answered the same fields in
 * another order than the first answer (API.md section 1: "the first response (status and body)
 * is replayed"). Answers recorded before this migration keep the order they were stored in.
 *
 * The table is rewritten under its lock while this runs; it holds a day of keys at most (they
 * expire and are purged). json and jsonb convert to each other on assignment, so a build still
 * writing `jsonb` during a rolling deploy stores into the new column as before.
 */
export class ReplayedBodiesAsSent1763804000000 implements MigrationInterface {
  name = 'ReplayedBodiesAsSent1763804000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE json USING response_body::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE jsonb USING response_body::jsonb`);
  }
}
