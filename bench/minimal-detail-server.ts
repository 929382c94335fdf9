import Fastify from 'fastify';
import { Pool } from 'pg';
import { formatMoney, formatPercentage } from '../src/common/money/money';
import { bareAuthentication } from './bare-auth';

/**
 * The yardstick of the detail benchmark: a bare Fastify + pg handler that authenticates the
 * same JWT the same way (bare-auth.ts: the credential state cached as the service caches it)
 * and runs the same query as the service's GET of a transaction (the transaction with its
 * split rules), with no framework in between.
 */
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const authenticate = bareAuthentication(pool);
const app = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });

app.get('/health/ready', async () => ({ status: 'ok' }));

app.get<{ Params: { sellers_pk: string; id: string } }>(
  '/unified/accounts/sellers/:sellers_pk/transactions/:id',
  async (request, reply) => {
    const refused = await authenticate(request.headers.authorization, request.params.sellers_pk, 'transactions.view');
    if (refused) return reply.status(refused).send({ statusCode: refused });
    // The transaction with its active split rules (as TransactionsRepository.findWithRulesForSeller does).
    const found = await pool.query(
      `SELECT t.*, row_to_json(r) AS rule FROM transactions t
     LEFT JOIN transaction_split_rules r ON r.transaction_id = t.id AND r.deleted_at IS NULL
     WHERE t.seller_id = $1 AND t.id = $2 ORDER BY r.seq`,
      [request.params.sellers_pk, request.params.id],
    );
    const t = found.rows[0];
    if (!t) return reply.status(404).send({ statusCode: 404 });
    const rules = { rows: found.rows.filter((row) => row.rule).map((row) => row.rule) };
    return {
      id: t.id,
      seller: t.seller_id,
      amount: formatMoney(Number(t.amount)),
      currency: t.currency,
      payment_type: t.payment_type,
      installments: t.installments,
      card_brand: t.card_brand,
      card_last4: t.card_last4,
      entry_mode: t.entry_mode,
      status: t.status,
      description: t.description,
      source: t.source,
      reference: t.reference,
      customer: t.customer,
      fees: {
        percentage: formatPercentage(t.fee_percentage),
        fixed: formatMoney(Number(t.fee_fixed)),
        amount: formatMoney(Number(t.fee_amount)),
      },
      rate_plan: t.rate_plan_id,
      split_plan: t.split_plan_id,
      split: {
        shares: t.shares,
        developer_amount: formatMoney(Number(t.developer_amount)),
        participants_amount: formatMoney(Number(t.participants_amount)),
        seller_net: formatMoney(Number(t.seller_net)),
      },
      split_rules: rules.rows,
      pix: t.pix,
      boleto: t.boleto,
      decline_reason: t.decline_reason,
      created_at: t.created_at.toISOString(),
      updated_at: t.updated_at.toISOString(),
      approved_at: t.approved_at?.toISOString() ?? null,
      voided_at: t.voided_at?.toISOString() ?? null,
      void_reason: t.void_reason,
    };
  },
);

app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' }).catch((error) => {
  console.error(error);
  process.exit(1);
});
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
