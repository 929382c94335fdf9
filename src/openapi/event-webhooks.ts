import { getSchemaPath } from '@nestjs/swagger';
import { EventOrderDto } from '../events/dto/checkout.dto';
import { SubscriptionResponseDto } from '../subscriptions/dto/subscription.dto';
import { SplitRuleResponseDto, TransactionResponseDto } from '../transactions/dto/transaction.dto';
import { DepositResponseDto, PostingResponseDto } from '../virtual-accounts/dto/virtual-account.dto';
import { WebhookResponseDto } from '../webhooks/dto/webhook.dto';
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES, EventType } from '../webhooks/outbox';

type Json = Record<string, any>;

type Model = new (...args: never[]) => unknown;
/** The models the payloads name (see ref), for the document's components. */
const models = new Set<Model>();

const ref = (model: Model): Json => {
  models.add(model);
  return { $ref: getSchemaPath(model) };
};

const splitRuleEvent = (what: string): Json => ({
  type: 'object',
  required: ['transaction', 'split_rule'],
  properties: {
    transaction: { type: 'string', format: 'uuid', description: 'The transaction of the rule.' },
    split_rule: { ...ref(SplitRuleResponseDto), description: what },
  },
});

/**
 * What each event type carries in `data`: the record as the API answers it (API.md section 5).
 * A Record over EventType, so a new type does not build without its payload.
 */
const EVENT_DATA: Record<EventType, Json> = {
  'transaction.created': ref(TransactionResponseDto),
  'transaction.approved': ref(TransactionResponseDto),
  'transaction.declined': ref(TransactionResponseDto),
  'transaction.voided': ref(TransactionResponseDto),
  'transaction.split_rule.created': splitRuleEvent('The rule as `POST …/split/` answered it.'),
  'transaction.split_rule.deleted': splitRuleEvent('The rule removed, as `POST …/split/` answered it.'),
  'virtual_account.deposit': ref(DepositResponseDto),
  'virtual_account.deposit.expired': ref(DepositResponseDto),
  'virtual_account.payment': ref(PostingResponseDto),
  'virtual_account.transfer': ref(PostingResponseDto),
  'virtual_account.payout.failed': ref(PostingResponseDto),
  'checkout.completed': ref(EventOrderDto),
  'checkout.expired': ref(EventOrderDto),
  'subscription.created': ref(SubscriptionResponseDto),
  'subscription.charged': ref(SubscriptionResponseDto),
  'subscription.past_due': ref(SubscriptionResponseDto),
  'subscription.canceled': ref(SubscriptionResponseDto),
  'webhook.test': {
    type: 'object',
    required: ['webhook'],
    properties: { webhook: { ...ref(WebhookResponseDto), description: 'The endpoint the test was sent to.' } },
  },
};

/** The models the payloads name, for the document's components. */
export const EVENT_DATA_MODELS = [...models];

const SIGNATURE_HEADERS: Json[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The event id, the same on every attempt: drop a request whose id you have handled.',
    schema: { type: 'string', format: 'uuid' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Seconds since the Unix epoch when this attempt was signed.',
    schema: { type: 'string', pattern: '^[0-9]+$', example: '1767225600' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret signing (two for 24 h after `rotate_secret`). Verify with the `standardwebhooks` library.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
];

/**
 * The document's `webhooks` (OpenAPI 3.1): one POST per event type, as the service sends it to
 * a seller's endpoint (Standard Webhooks): the signature headers and `{id, type, created_at,
 * data}`.
 */
export function eventWebhooks(): Json {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          tags: ['webhooks'],
          summary: EVENT_TYPE_DESCRIPTIONS[type],
          description:
            `Sent to each active endpoint of the seller that subscribes to \`${type}\` (or \`*\`). ` +
            'Only a 2xx answer within the timeout (`WEBHOOKS_TIMEOUT_SECONDS`, 15 s by default) counts; anything else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, then the delivery fails.',
          security: [],
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'type', 'created_at', 'data'],
                  properties: {
                    id: { type: 'string', format: 'uuid', description: 'The event id (also `webhook-id`).' },
                    type: { type: 'string', const: type },
                    created_at: { type: 'string', format: 'date-time' },
                    data: EVENT_DATA[type],
                  },
                },
              },
            },
          },
          responses: {
            '2XX': { description: 'Received: the delivery succeeded.' },
            default: { description: 'Any other answer, or none within 15 s: the delivery is retried.' },
          },
        },
      },
    ]),
  );
}
