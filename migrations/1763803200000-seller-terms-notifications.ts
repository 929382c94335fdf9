import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Seller terms change notifications: a change to what a charge reads first (a seller's row,
 * with its rate and split plans) NOTIFYs `credentials_changed` in the changing transaction, so
 * the API processes drop their cached seller terms (src/auth/credential-cache.ts) at once.
 * Payloads: `seller:<id>` (any update or deletion of the seller) and `rate_plans:` (a rate plan
 * updated, by `rates:sync` or by hand: one per statement, as many sellers share a plan). Split
 * plans need none: their database refuses any change to them.
 */
export class SellerTermsNotifications1763803200000 implements MigrationInterface {
  name = 'SellerTermsNotifications1763803200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_seller_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'sellers' THEN
          PERFORM pg_notify('credentials_changed', 'seller:' || OLD.id);
        ELSE
          PERFORM pg_notify('credentials_changed', 'rate_plans:');
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER sellers_notify_terms AFTER UPDATE OR DELETE ON sellers FOR EACH ROW
      EXECUTE FUNCTION notify_seller_terms_changed()`);
    await q.query(`
      CREATE TRIGGER rate_plans_notify_terms AFTER UPDATE OR DELETE OR TRUNCATE ON rate_plans FOR EACH STATEMENT
      EXECUTE FUNCTION notify_seller_terms_changed()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER rate_plans_notify_terms ON rate_plans`);
    await q.query(`DROP TRIGGER sellers_notify_terms ON sellers`);
    await q.query(`DROP FUNCTION notify_seller_terms_changed()`);
  }
}
