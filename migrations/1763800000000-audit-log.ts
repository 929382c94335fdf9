import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log (API.md section 12): one row per privileged or money-affecting action by a
 * person, written in the database transaction of the action. Append-only, enforced here:
 * UPDATE, DELETE and TRUNCATE are refused.
 */
export class AuditLog1763800000000 implements MigrationInterface {
  name = 'AuditLog1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_log (
        id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        actor_kind  text        NOT NULL CHECK (actor_kind IN ('user', 'api_key', 'system')),
        actor_id    uuid,
        action      text        NOT NULL CHECK (action ~ '^[a-z_]+(\\.[a-z_]+)+$'),
        seller_id   uuid        REFERENCES sellers (id),
        target_type text        NOT NULL,
        target_id   uuid        NOT NULL,
        changes     jsonb       NOT NULL DEFAULT '{}'::jsonb,
        request_id  text,
        ip          text,
        created_at  timestamptz NOT NULL DEFAULT now(),
        CHECK ((actor_kind = 'system') = (actor_id IS NULL))
      )`);
    await q.query(`CREATE INDEX audit_log_recent ON audit_log (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_log_by_actor ON audit_log (actor_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_log_by_seller ON audit_log (seller_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX audit_log_by_action ON audit_log (action, created_at DESC, id DESC)`);
    await q.query(`
      CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the audit log is append-only: % is refused', TG_OP USING ERRCODE = 'restrict_violation';
      END $$`);
    await q.query(
      `CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()`,
    );
    await q.query(
      `CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_log`);
    await q.query(`DROP FUNCTION audit_log_append_only()`);
  }
}
