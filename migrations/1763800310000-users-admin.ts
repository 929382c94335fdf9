import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Users admin and the access check (API.md section 3):
 * - `users.active`: a deactivated user cannot log in and its tokens stop at once (the guard
 *   reads it with the token version);
 * - `users.seq`: keyset pages of `GET /users/`;
 * - `users.access_version`: bumped by the database whenever one of the user's access entries
 *   is written, so a cached access (per user and seller) is reused only while it is current;
 *   the guard reads it in the user query it already makes.
 */
export class UsersAdmin1763800310000 implements MigrationInterface {
  name = 'UsersAdmin1763800310000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE users ADD COLUMN active boolean NOT NULL DEFAULT true`);
    await q.query(`ALTER TABLE users ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE`);
    await q.query(`ALTER TABLE users ADD COLUMN access_version bigint NOT NULL DEFAULT 0`);
    await q.query(`
      CREATE FUNCTION accesses_bump_user_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          UPDATE users SET access_version = access_version + 1 WHERE id = OLD.user_id;
        END IF;
        IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.user_id IS DISTINCT FROM OLD.user_id) THEN
          UPDATE users SET access_version = access_version + 1 WHERE id = NEW.user_id;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER accesses_bump_user_version AFTER INSERT OR UPDATE OR DELETE ON accesses
       FOR EACH ROW EXECUTE FUNCTION accesses_bump_user_version()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER accesses_bump_user_version ON accesses`);
    await q.query(`DROP FUNCTION accesses_bump_user_version()`);
    await q.query(`ALTER TABLE users DROP COLUMN access_version, DROP COLUMN seq, DROP COLUMN active`);
  }
}
