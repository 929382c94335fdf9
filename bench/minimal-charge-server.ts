import { checkMoney } from '../src/common/money/money';
import { CompiledPlanCache } from '../src/split/split-engine';
import { resolveSplit } from '../src/split/resolve';
import type { EntryMode, PaymentType } from '../src/split/table';
import { detectBrand, passesLuhn } from '../src/transactions/processor/card';
import { bareCache } from './bare-auth';
import { startBareServer } from './bare-server';
import { bareTransactionView } from './bare-view';

/**
 * The yardstick of the charges benchmark: a bare Fastify + pg handler for a card charge that
 * authenticates like the service (bare-auth.ts), checks the amount and card the same way,
 * resolves the fee and split with the same compiled engine, and writes what the service
 * writes, in the fewest round trips: the seller with its plans (one query, cached as the
 * service caches it), the pending
 * transaction, the sandbox processor's charge record, then the approval with its
 * `transaction.created` and `transaction.approved` outbox events (one statement).
 */
const plans = new CompiledPlanCache();

interface ChargeBody {
  amount: string;
  payment_type: PaymentType;
  installments?: number;
  entry_mode?: EntryMode;
  card: { number: string };
  description?: string;
}

startBareServer((app, pool, authenticate) => {
  // The seller with its plans, cached like the service's seller terms (CredentialCache).
  const sellerTerms = bareCache(
    async (sellerId) =>
      (
        await pool.query(
          `SELECT s.developer_account, s.split_participants, r.id AS rate_plan_id, r.active, r.fees, r.updated_at,
                  p.id AS split_plan_id, p.split_details, p.split_details_online, p.automatic_developer_fee
             FROM sellers s JOIN rate_plans r ON r.id = s.rate_plan_id LEFT JOIN split_plans p ON p.id = s.split_plan_id
            WHERE s.id = $1`,
          [sellerId],
        )
      ).rows[0],
  );
  app.post<{ Params: { sellers_pk: string }; Body: ChargeBody }>(
    '/unified/accounts/sellers/:sellers_pk/transactions',
    async (request, reply) => {
      const sellerId = request.params.sellers_pk;
      const refused = await authenticate(request.headers.authorization, sellerId, 'transactions.create');
      if (refused) return reply.status(refused).send({ statusCode: refused });
      const body = request.body;
      const amount = checkMoney(body.amount);
      const brand = detectBrand(body.card.number);
      if (!amount.ok || !passesLuhn(body.card.number) || !brand) return reply.status(400).send({ statusCode: 400 });
      const installments = body.installments ?? 1;
      const entryMode = body.entry_mode ?? 'online';

      const seller = await sellerTerms(sellerId);
      if (!seller?.active) return reply.status(400).send({ statusCode: 400 });
      const resolution = resolveSplit(
        { amount: amount.value, paymentType: body.payment_type, installments, brand, entryMode },
        plans.ratePlan({ id: seller.rate_plan_id, updatedAt: seller.updated_at, fees: seller.fees }),
        seller.split_plan_id
          ? plans.splitPlan({
              id: seller.split_plan_id,
              splitDetails: seller.split_details,
              splitDetailsOnline: seller.split_details_online,
              automaticDeveloperFee: seller.automatic_developer_fee,
            })
          : null,
        { developerAccount: seller.developer_account, participants: seller.split_participants },
      );

      const { rows: inserted } = await pool.query(
        `INSERT INTO transactions (seller_id, amount, currency, payment_type, installments, card_brand, card_last4,
           entry_mode, status, description, source, rate_plan_id, split_plan_id, fee_percentage, fee_fixed, fee_amount,
           shares, developer_amount, participants_amount, seller_net, processor)
         VALUES ($1, $2, 'BRL', $3, $4, $5, $6, $7, 'pending', $8, 'api', $9, $10, $11, $12, $13, $14, $15, $16, $17, 'sandbox')
         RETURNING *`,
        [
          sellerId,
          amount.value,
          body.payment_type,
          installments,
          brand,
          body.card.number.slice(-4),
          entryMode,
          body.description ?? null,
          seller.rate_plan_id,
          seller.split_plan_id,
          resolution.fee.units,
          resolution.fee.fixed,
          resolution.fee.amount,
          JSON.stringify(resolution.shares),
          resolution.developerAmount,
          resolution.participantsAmount,
          resolution.sellerNet,
        ],
      );
      const pending = inserted[0];
      const reference = `sbx_${pending.id.replace(/-/g, '')}`;
      await pool.query(
        `INSERT INTO sandbox_charges (transaction_id, status, reference) VALUES ($1, 'approved', $2)
         ON CONFLICT (transaction_id) DO NOTHING`,
        [pending.id, reference],
      );
      const approvedAt = new Date();
      const view = bareTransactionView(
        {
          ...pending,
          status: 'approved',
          processor_reference: reference,
          approved_at: approvedAt,
          updated_at: approvedAt,
        },
        [],
      );
      await pool.query(
        `WITH approved AS (
           UPDATE transactions SET status = 'approved', processor_reference = $2, approved_at = $3, updated_at = $3
            WHERE id = $1 AND status = 'pending' RETURNING seller_id)
         INSERT INTO outbox_events (type, seller_id, data)
         SELECT e.type, approved.seller_id, $4::jsonb FROM approved, unnest($5::text[]) AS e(type)`,
        [pending.id, reference, approvedAt, JSON.stringify(view), ['transaction.created', 'transaction.approved']],
      );
      return reply.status(201).send(view);
    },
  );
});
