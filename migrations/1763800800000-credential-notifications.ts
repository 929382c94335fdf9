import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Credential change notifications: every change to what authentication reads NOTIFYs
 * `credentials_changed` in the changing transaction (delivered when it commits), so the API
 * processes drop their cached credential state (src/auth/credential-cache.ts) at once.
 * Payloads: `user:<id>` (token version, active, superuser, access version, a session revoked
 * or removed, an access entry written) and `api_key:<id>` (active, deleted, its hash or seller).
 * Notifications of one transaction with the same payload reach listeners once.
 */
export class CredentialNotifications1763800800000 implements MigrationInterface {
  name = 'CredentialNotifications1763800800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'api_keys' THEN
          PERFORM pg_notify('credentials_changed', 'api_key:' || OLD.id);
        ELSIF TG_TABLE_NAME = 'users' THEN
          PERFORM pg_notify('credentials_changed', 'user:' || OLD.id);
        ELSE
          IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('credentials_changed', 'user:' || OLD.user_id);
          END IF;
          IF TG_OP <> 'DELETE' THEN
            PERFORM pg_notify('credentials_changed', 'user:' || NEW.user_id);
          END IF;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER users_notify_credentials AFTER UPDATE ON users FOR EACH ROW
      WHEN (OLD.token_version IS DISTINCT FROM NEW.token_version OR OLD.active IS DISTINCT FROM NEW.active
        OR OLD.is_superuser IS DISTINCT FROM NEW.is_superuser OR OLD.access_version IS DISTINCT FROM NEW.access_version)
      EXECUTE FUNCTION notify_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER users_deleted_notify_credentials AFTER DELETE ON users FOR EACH ROW
      EXECUTE FUNCTION notify_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER refresh_tokens_notify_credentials AFTER UPDATE ON refresh_tokens FOR EACH ROW
      WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.user_id IS DISTINCT FROM NEW.user_id)
      EXECUTE FUNCTION notify_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER refresh_tokens_deleted_notify_credentials AFTER DELETE ON refresh_tokens FOR EACH ROW
      EXECUTE FUNCTION notify_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER accesses_notify_credentials AFTER INSERT OR UPDATE OR DELETE ON accesses FOR EACH ROW
      EXECUTE FUNCTION notify_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER api_keys_notify_credentials AFTER UPDATE ON api_keys FOR EACH ROW
      WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
        OR OLD.key_hash IS DISTINCT FROM NEW.key_hash OR OLD.seller_id IS DISTINCT FROM NEW.seller_id)
      EXECUTE FUNCTION notify_credentials_changed()`);
    await q.query(`
      CREATE TRIGGER api_keys_deleted_notify_credentials AFTER DELETE ON api_keys FOR EACH ROW
      EXECUTE FUNCTION notify_credentials_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER api_keys_deleted_notify_credentials ON api_keys`);
    await q.query(`DROP TRIGGER api_keys_notify_credentials ON api_keys`);
    await q.query(`DROP TRIGGER accesses_notify_credentials ON accesses`);
    await q.query(`DROP TRIGGER refresh_tokens_deleted_notify_credentials ON refresh_tokens`);
    await q.query(`DROP TRIGGER refresh_tokens_notify_credentials ON refresh_tokens`);
    await q.query(`DROP TRIGGER users_deleted_notify_credentials ON users`);
    await q.query(`DROP TRIGGER users_notify_credentials ON users`);
    await q.query(`DROP FUNCTION notify_credentials_changed()`);
  }
}
