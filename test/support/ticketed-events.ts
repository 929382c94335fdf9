import type { HttpClient } from './http';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The body of an event on sale now: two ticket types (10 × Pista, 2 × VIP), every payment type. */
export function eventBody(sellerId: string, overrides: Record<string, unknown> = {}) {
  const now = Date.now();
  return {
    seller: sellerId,
    name: 'Festival de Verão',
    description: 'Três palcos.',
    venue: 'Arena Central, São Paulo',
    starts_at: iso(now + 30 * DAY),
    ends_at: iso(now + 30 * DAY + 6 * 3_600_000),
    payment_types: ['credit', 'debit', 'pix', 'boleto'],
    max_installments: 3,
    ticket_types: [
      { name: 'Pista', price: '100.00', quantity: 10, max_per_order: 4 },
      { name: 'VIP', price: '250.00', quantity: 2, max_per_order: 2 },
    ],
    sales_start_at: iso(now - 3_600_000),
    sales_end_at: iso(now + 29 * DAY),
    ...overrides,
  };
}

/** Creates an event through the API and publishes it; answers the published event. */
export async function publishedEvent(
  http: HttpClient,
  token: string,
  sellerId: string,
  overrides: Record<string, unknown> = {},
): Promise<any> {
  const created = await http.post('/event/event/', eventBody(sellerId, overrides), { token });
  if (created.status !== 201) throw new Error(`create event: ${created.status} ${created.text}`);
  const published = await http.patch(`/event/event/${created.body.id}/`, { status: 'published' }, { token });
  if (published.status !== 200) throw new Error(`publish event: ${published.status} ${published.text}`);
  return published.body;
}

/** A checkout body: a valid buyer, the items, the payment. */
export function checkoutBody(
  items: Array<{ ticket_type: string; quantity: number }>,
  payment: Record<string, unknown>,
  buyer: Record<string, unknown> = {},
) {
  return {
    buyer: { name: 'Ana Souza', email: 'ana@example.com', document: '529.982.247-25', ...buyer },
    items,
    payment,
  };
}
