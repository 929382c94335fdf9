import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys scoped to their owner and matched by a request fingerprint (API.md section 1),
 * with a short lease for in-progress keys and the record a key is tied to (a charge's pending
 * transaction). Rows written before keep their key taken: their fingerprint ('legacy') matches no
 * new request, so a retry of an old key answers 422 instead of acting a second time.
 */
export class IdempotencyOwnerScope1763800200000 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE idempotency_keys
        ADD COLUMN owner       text,
        ADD COLUMN fingerprint text,
        ADD COLUMN claim       uuid,
        ADD COLUMN lease_until timestamptz,
        ADD COLUMN resource_id uuid`);
    await q.query(`
      UPDATE idempotency_keys k
         SET owner = CASE
               WHEN k.scope LIKE 'api_key:%'
                 THEN coalesce((SELECT 'seller:' || a.seller_id FROM api_keys a WHERE a.id::text = substr(k.scope, 9)), k.scope)
               ELSE k.scope
             END,
             fingerprint = 'legacy',
             claim = gen_random_uuid(),
             lease_until = k.created_at + interval '60 seconds'`);
    // One row per (owner, key): of rows that now collide, any one keeps the key taken.
    await q.query(`
      DELETE FROM idempotency_keys k
       USING idempotency_keys other
       WHERE k.owner = other.owner AND k.key = other.key AND k.ctid > other.ctid`);
    await q.query(`ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey`);
    await q.query(`
      ALTER TABLE idempotency_keys
        DROP COLUMN scope,
        DROP COLUMN method,
        DROP COLUMN path,
        DROP COLUMN request_hash,
        ALTER COLUMN owner SET NOT NULL,
        ALTER COLUMN fingerprint SET NOT NULL,
        ALTER COLUMN claim SET NOT NULL,
        ALTER COLUMN lease_until SET NOT NULL,
        ADD PRIMARY KEY (owner, key),
        ADD CONSTRAINT idempotency_keys_completed_has_response
          CHECK (status <> 'completed' OR response_status IS NOT NULL)`);

    // The sandbox processor's own record of the charges it received, by idempotency key (our
    // transaction id): what a real processor keeps on its side, shared by every API process.
    await q.query(`
      CREATE TABLE sandbox_charges (
        transaction_id uuid        PRIMARY KEY,
        status         text        NOT NULL CHECK (status IN ('approved', 'declined', 'pending', 'voided')),
        reference      text        NOT NULL,
        decline_reason text,
        pix            jsonb,
        boleto         jsonb,
        created_at     timestamptz NOT NULL DEFAULT now(),
        voided_at      timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE sandbox_charges`);
    await q.query(`DELETE FROM idempotency_keys`);
    await q.query(`ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey`);
    await q.query(`
      ALTER TABLE idempotency_keys
        DROP CONSTRAINT idempotency_keys_completed_has_response,
        DROP COLUMN owner, DROP COLUMN fingerprint, DROP COLUMN claim, DROP COLUMN lease_until, DROP COLUMN resource_id,
        ADD COLUMN scope text NOT NULL, ADD COLUMN method text NOT NULL, ADD COLUMN path text NOT NULL,
        ADD COLUMN request_hash text NOT NULL,
        ADD PRIMARY KEY (scope, method, path, key)`);
  }
}
