import { SharedConnections } from '../src/database/shared-connections';
import { startBareServer } from './bare-server';
import { bareTransactionView } from './bare-view';

/**
 * The yardstick of the detail benchmark: a bare Fastify + pg handler that authenticates the
 * same JWT the same way (bare-auth.ts: the credential state cached as the service caches it)
 * and runs the same query as the service's GET of a transaction (the transaction with its
 * split rules) on the same shared connections (SharedConnections), with no framework in between.
 * With `DETAIL_READS=pool`, each read takes a pooled connection instead (what the service did
 * before SharedConnections): the benchmark's measure of what the shared connections gain.
 */
startBareServer((app, pool, authenticate) => {
  const shared =
    process.env.DETAIL_READS === 'pool' ? null : new SharedConnections({ connectionString: process.env.DATABASE_URL });
  const read = async (text: string, values: unknown[]): Promise<Array<Record<string, unknown>>> =>
    shared ? shared.query(text, values) : (await pool.query(text, values)).rows;
  app.get<{ Params: { sellers_pk: string; id: string } }>(
    '/unified/accounts/sellers/:sellers_pk/transactions/:id',
    async (request, reply) => {
      const refused = await authenticate(request.headers.authorization, request.params.sellers_pk, 'transactions.view');
      if (refused) return reply.status(refused).send({ statusCode: refused });
      // The transaction with its active split rules (as TransactionsRepository.findWithRulesForSeller does).
      const rows = await read(
        `SELECT t.*, row_to_json(r) AS rule FROM transactions t
         LEFT JOIN transaction_split_rules r ON r.transaction_id = t.id AND r.deleted_at IS NULL
         WHERE t.seller_id = $1 AND t.id = $2 ORDER BY r.seq`,
        [request.params.sellers_pk, request.params.id],
      );
      const t = rows[0];
      if (!t) return reply.status(404).send({ statusCode: 404 });
      return bareTransactionView(
        t,
        rows.filter((row) => row.rule).map((row) => row.rule),
      );
    },
  );
});
