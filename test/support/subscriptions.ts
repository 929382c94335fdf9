import { CARDS } from './payments';
import type { TestApp } from './test-app';

/** Subscription plans and subscribers made over HTTP, as a seller's back office and a public page would. */
export const SUBSCRIBER = { name: 'Joana Lima', email: 'joana@example.com', document: '529.982.247-25' };

export async function createSubscriptionPlan(
  t: TestApp,
  token: string,
  sellerId: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const res = await t.http.post(
    '/subscriptions/plan/',
    {
      seller: sellerId,
      name: 'Clube do Café',
      description: 'Um pacote por mês',
      amount: '49.90',
      interval: 'month',
      payment_types: ['credit', 'pix'],
      ...overrides,
    },
    { token },
  );
  if (res.status !== 201) throw new Error(`create plan: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function subscribe(
  t: TestApp,
  planId: string,
  payment: { type: 'credit' | 'pix'; card?: unknown } = { type: 'credit', card: CARDS.visa },
  subscriber: Record<string, string> = SUBSCRIBER,
) {
  const res = await t.http.post(
    `/subscriptions/plan/${planId}/subscribe/`,
    { subscriber, payment },
    { headers: { 'x-forwarded-for': clientAddress() } },
  );
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${res.text}`);
  return res.body as {
    id: string;
    status: string;
    manage_token: string;
    transaction: string | null;
    next_charge_at: string | null;
    current_period_start: string;
    current_period_end: string;
    pix: { qr_code: string; expires_at: string } | null;
  };
}

let clients = 0;
/**
 * A client address of its own per public request (the app trusts X-Forwarded-For with
 * TRUST_PROXY=true), so that flows with many subscribers stay under the per-address rate limit.
 */
export function clientAddress(): string {
  clients++;
  return `10.${(clients >> 16) & 255}.${(clients >> 8) & 255}.${clients & 255}`;
}
