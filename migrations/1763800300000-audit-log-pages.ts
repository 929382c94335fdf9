import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Keyset pages of the audit log (API.md section 1, 12): a strictly increasing `seq` like every
 * listed table, with one index per filter, so `GET /audit/` reads one index range per page.
 * Adding the column rewrites the table without firing the append-only row triggers.
 */
export class AuditLogPages1763800300000 implements MigrationInterface {
  name = 'AuditLogPages1763800300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_log ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE`);
    await q.query(`CREATE INDEX audit_log_actor_seq ON audit_log (actor_id, seq)`);
    await q.query(`CREATE INDEX audit_log_seller_seq ON audit_log (seller_id, seq)`);
    await q.query(`CREATE INDEX audit_log_action_seq ON audit_log (action, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_log DROP COLUMN seq`);
  }
}
