import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `transaction.split_rule.deleted` events carry the removed rule as the API answers it
 * (`{transaction, split_rule: {id, recipient, amount, amount_type, created_at}}`, as
 * `.created` does), no longer its bare id: API.md section 5 says an event's `data` is the
 * record. The events stored the old way are rewritten from the rule, which a removal keeps
 * (`deleted_at`), so that the events list and replays give one shape for the type. Money and
 * percentages are written as SplitRuleResponseDto writes them ("10.00"; "12.5").
 */
export class SplitRuleDeletedEventsCarryTheRule1763804200000 implements MigrationInterface {
  name = 'SplitRuleDeletedEventsCarryTheRule1763804200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE outbox_events o SET data = jsonb_set(o.data, '{split_rule}', jsonb_build_object(
          'id', r.id,
          'recipient', r.recipient,
          'amount', CASE WHEN r.amount_type = 'fixed'
            THEN (r.fixed_amount / 100)::text || '.' || lpad((r.fixed_amount % 100)::text, 2, '0')
            ELSE (r.percentage / 10000)::text
                 || coalesce('.' || nullif(rtrim(lpad((r.percentage % 10000)::text, 4, '0'), '0'), ''), '')
          END,
          'amount_type', r.amount_type,
          'created_at', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
      FROM transaction_split_rules r
      WHERE o.type = 'transaction.split_rule.deleted' AND jsonb_typeof(o.data->'split_rule') = 'string'
        AND r.id = (o.data->>'split_rule')::uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE outbox_events SET data = jsonb_set(data, '{split_rule}', data->'split_rule'->'id')
      WHERE type = 'transaction.split_rule.deleted' AND jsonb_typeof(data->'split_rule') = 'object'`);
  }
}
