import { MigrationInterface, QueryRunner } from 'typeorm';

export class Plans1763700200000 implements MigrationInterface {
  name = 'Plans1763700200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rate_plans (
        id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq          bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        external_id  text        NOT NULL UNIQUE,
        name         text        NOT NULL,
        description  text        NOT NULL DEFAULT '',
        active       boolean     NOT NULL DEFAULT true,
        fees         jsonb       NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE split_plans (
        id                      uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        seq                     bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
        name                    text        NOT NULL,
        rate_plan_id            uuid        NOT NULL REFERENCES rate_plans (id),
        split_details           text        NOT NULL,
        split_details_online    text        NOT NULL,
        automatic_developer_fee boolean     NOT NULL DEFAULT true,
        created_at              timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX split_plans_rate_plan ON split_plans (rate_plan_id)`);
    // Split plans are immutable: transactions keep the resolution they were charged with.
    await q.query(`
      CREATE FUNCTION split_plans_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'split plans are immutable; create a new plan instead' USING ERRCODE = 'restrict_violation';
      END $$`);
    await q.query(`
      CREATE TRIGGER split_plans_immutable BEFORE UPDATE OR DELETE ON split_plans
      FOR EACH ROW EXECUTE FUNCTION split_plans_immutable()`);
    // Rate plans are referenced by split plans and history: never deleted.
    await q.query(`
      CREATE FUNCTION rate_plans_undeletable() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'rate plans are never deleted; set active to false instead' USING ERRCODE = 'restrict_violation';
      END $$`);
    await q.query(`
      CREATE TRIGGER rate_plans_undeletable BEFORE DELETE ON rate_plans
      FOR EACH ROW EXECUTE FUNCTION rate_plans_undeletable()`);

    await q.query(`ALTER TABLE sellers ADD COLUMN rate_plan_id uuid REFERENCES rate_plans (id)`);
    await q.query(`ALTER TABLE sellers ADD COLUMN split_plan_id uuid REFERENCES split_plans (id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sellers DROP COLUMN split_plan_id, DROP COLUMN rate_plan_id`);
    await q.query(`DROP TABLE split_plans`);
    await q.query(`DROP FUNCTION split_plans_immutable()`);
    await q.query(`DROP TABLE rate_plans`);
    await q.query(`DROP FUNCTION rate_plans_undeletable()`);
  }
}
