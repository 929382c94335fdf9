import { MigrationInterface, QueryRunner } from 'typeorm';

export class IdentityAndAccess1763700100000 implements MigrationInterface {
  name = 'IdentityAndAccess1763700100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id             uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        email          text        NOT NULL CHECK (email = lower(email)),
        name           text        NOT NULL,
        password_hash  text        NOT NULL,
        is_superuser   boolean     NOT NULL DEFAULT false,
        token_version  integer     NOT NULL DEFAULT 0,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email ON users (email)`);

    await q.query(`
      CREATE TABLE refresh_tokens (
        jti         uuid        PRIMARY KEY,
        user_id     uuid        NOT NULL REFERENCES users (id),
        expires_at  timestamptz NOT NULL,
        revoked_at  timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id)`);

    await q.query(`
      CREATE TABLE password_recoveries (
        user_id     uuid        PRIMARY KEY REFERENCES users (id),
        code_hash   text        NOT NULL,
        attempts    integer     NOT NULL DEFAULT 0,
        expires_at  timestamptz NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE mail_outbox (
        id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        recipient   text        NOT NULL,
        subject     text        NOT NULL,
        body        text,
        status      text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'logged', 'failed')),
        attempts    integer     NOT NULL DEFAULT 0,
        last_error  text,
        created_at  timestamptz NOT NULL DEFAULT now(),
        sent_at     timestamptz
      )`);

    await q.query(`
      CREATE TABLE rate_limits (
        key         text        PRIMARY KEY,
        hits        integer     NOT NULL,
        expires_at  timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX rate_limits_expires_at ON rate_limits (expires_at)`);

    await q.query(`
      CREATE TABLE sellers (
        id                 uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq                bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        name               text        NOT NULL,
        document           text        NOT NULL CHECK (document ~ '^([0-9]{11}|[0-9]{14})$'),
        email              text        NOT NULL,
        developer_account  uuid,
        split_participants jsonb       NOT NULL DEFAULT '{}'::jsonb,
        created_at         timestamptz NOT NULL DEFAULT now(),
        updated_at         timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX sellers_document ON sellers (document)`);

    await q.query(`
      CREATE TABLE subaccounts (
        id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq         bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id   uuid        NOT NULL REFERENCES sellers (id),
        name        text        NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX subaccounts_seller_seq ON subaccounts (seller_id, seq)`);

    await q.query(`
      CREATE TABLE accesses (
        id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq          bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        user_id      uuid        NOT NULL REFERENCES users (id),
        seller_id    uuid        NOT NULL REFERENCES sellers (id),
        permissions  text[]      NOT NULL DEFAULT '{}',
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now(),
        UNIQUE (user_id, seller_id)
      )`);
    await q.query(`CREATE INDEX accesses_seller_seq ON accesses (seller_id, seq)`);

    await q.query(`
      CREATE TABLE api_keys (
        id            uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq           bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        seller_id     uuid        NOT NULL REFERENCES sellers (id),
        key_hash      text        NOT NULL UNIQUE,
        key_suffix    text        NOT NULL,
        label         text        NOT NULL,
        description   text        NOT NULL,
        active        boolean     NOT NULL DEFAULT true,
        last_used_at  timestamptz,
        created_at    timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now(),
        deleted_at    timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_seller_seq ON api_keys (seller_id, seq) WHERE deleted_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'api_keys',
      'accesses',
      'subaccounts',
      'sellers',
      'rate_limits',
      'mail_outbox',
      'password_recoveries',
      'refresh_tokens',
      'users',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
