import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { SAMPLE_RATE_PLANS_FILE } from '../src/config/paths';
import { cpuMeter, CpuPerRequest, medianCpu, printCpu } from './cpu';
import { median } from './measure';
import { BENCH_JWT_SECRET, benchDatabase, startServer } from './support';

const CARD = { number: '4111111111111111', holder_name: 'ANA SOUZA', exp_month: 12, exp_year: 2031, cvv: '123' };
const CONNECTIONS = 32;

/**
 * Event checkout: card checkouts per second on one hot event (one ticket type, 32 connections)
 * against `POST …/transactions/` alone at the same concurrency, interleaved rounds: the ratio
 * is what the inventory (hold, order, tickets, e-mail, events) costs on top of the charge.
 * Then a burst at an event with fewer seats than buyers, to count oversold seats (must be 0).
 */
export async function checkoutBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const api = await startServer('dist/src/main.js', {
    DATABASE_URL: db.url,
    JWT_SECRET: BENCH_JWT_SECRET,
    LOG_LEVEL: 'warn',
    WORKERS_IN_API: 'false',
    NODE_ENV: 'production',
    // Each simulated buyer has its own address, as on the internet (the public limit is per address).
    TRUST_PROXY: 'true',
  });
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  try {
    const { token, sellerId } = await setUp(api.url, sql);
    const hot = await createEvent(api.url, token, sellerId, 1_000_000);
    const checkoutUrl = `${api.url}/event/event/${hot.id}/checkout/`;
    const checkoutBody = JSON.stringify({
      buyer: { name: 'Ana Souza', email: 'ana@example.com', document: '52998224725' },
      items: [{ ticket_type: hot.ticketTypeId, quantity: 1 }],
      payment: { type: 'credit', card: CARD },
    });
    const chargeUrl = `${api.url}/unified/accounts/sellers/${sellerId}/transactions/`;
    const chargeBody = JSON.stringify({ amount: '80.00', payment_type: 'credit', card: CARD });
    const auth = { authorization: `Bearer ${token}` };

    const rates: Record<'checkout' | 'charge', number[]> = { checkout: [], charge: [] };
    const cpu: Record<'checkout' | 'charge', Array<CpuPerRequest | null>> = { checkout: [], charge: [] };
    await load(checkoutUrl, checkoutBody, {}, 2);
    await load(chargeUrl, chargeBody, auth, 2);
    for (let round = 0; round < 3; round++) {
      for (const [side, url, body, headers] of [
        ['checkout', checkoutUrl, checkoutBody, {}],
        ['charge', chargeUrl, chargeBody, auth],
      ] as const) {
        const meter = cpuMeter([api.pid]);
        const { rate, requests } = await load(url, body, headers, 5);
        rates[side].push(rate);
        cpu[side].push(meter.perRequest(requests));
      }
    }
    const checkout = median(rates.checkout);
    const charge = median(rates.charge);
    console.log(`\nCard payments, ${CONNECTIONS} connections (per second, median of 3 interleaved rounds)`);
    console.log(
      `  POST /event/event/{id}/checkout/ (one hot event)   ${Math.round(checkout).toString().padStart(8)}/s`,
    );
    console.log(`  POST …/transactions/ alone                        ${Math.round(charge).toString().padStart(8)}/s`);
    console.log(`  ratio checkout / charge: ${(checkout / charge).toFixed(2)}   (target >= 0.7)`);
    printCpu(
      [
        ['checkout', medianCpu(cpu.checkout)],
        ['charge', medianCpu(cpu.charge)],
      ],
      20,
    );

    // Oversell: 200 seats, buyers of 1–3 seats at full speed for 5 s.
    const scarce = await createEvent(api.url, token, sellerId, 200);
    const bodies = [1, 2, 3].map((quantity) =>
      JSON.stringify({
        buyer: { name: 'Ana Souza', email: 'ana@example.com', document: '52998224725' },
        items: [{ ticket_type: scarce.ticketTypeId, quantity }],
        payment: { type: 'credit', card: CARD },
      }),
    );
    const burst = await load(`${api.url}/event/event/${scarce.id}/checkout/`, bodies, {}, 5, true);
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // requests cut off at the end finish on the server
    const { rows } = await sql.query(
      `SELECT t.quantity, t.sold, t.held,
         (SELECT count(*)::int FROM event_tickets k WHERE k.ticket_type_id = t.id) AS tickets,
         (SELECT coalesce(sum(i.quantity), 0)::int FROM event_order_items i JOIN event_orders o ON o.id = i.order_id
          WHERE i.ticket_type_id = t.id AND o.status IN ('paid', 'pending')) AS ordered
       FROM ticket_types t WHERE t.id = $1`,
      [scarce.ticketTypeId],
    );
    const s = rows[0];
    const oversold = Math.max(0, s.sold + s.held - s.quantity, s.tickets - s.quantity, s.ordered - s.quantity);
    console.log(
      `\nOversell check: ${burst.requests} checkouts for ${s.quantity} seats -> ${s.sold} sold, ${s.held} held, ` +
        `${s.tickets} tickets; refused ${burst.refused}`,
    );
    console.log(`  oversold seats: ${oversold}   (must be 0)`);
    if (oversold !== 0) process.exitCode = 1;
  } finally {
    await sql.end();
    await api.stop();
    await db.stop();
  }
}

let address = 0;
/** A new client address per request, so the per-address limit of the public route never trips. */
const nextAddress = () => {
  address = (address + 1) % 16_000_000;
  return `10.${address >> 16}.${(address >> 8) & 255}.${address & 255}`;
};

async function load(
  url: string,
  body: string | string[],
  headers: Record<string, string>,
  seconds: number,
  refusalsAllowed = false,
): Promise<{ rate: number; requests: number; refused: number }> {
  const bodies = Array.isArray(body) ? body : [body];
  let n = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...headers },
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          body: bodies[n++ % bodies.length],
          headers: { ...request.headers, 'x-forwarded-for': nextAddress() },
        }),
      },
    ],
  });
  const refused = result['4xx'];
  if (result.errors > 0 || result['5xx'] > 0 || (!refusalsAllowed && result.non2xx > 0)) {
    throw new Error(`${url}: ${result.non2xx} non-2xx (${result['5xx']} 5xx), ${result.errors} errors`);
  }
  return { rate: result.requests.average, requests: result.requests.total, refused };
}

async function call(baseUrl: string, method: string, path: string, body: unknown, token?: string): Promise<any> {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A superuser and a seller on the sample rate plan, through the API. */
async function setUp(baseUrl: string, sql: Client) {
  const sample = JSON.parse(readFileSync(SAMPLE_RATE_PLANS_FILE, 'utf8'))[0];
  const { rows } = await sql.query(
    `INSERT INTO rate_plans (external_id, name, fees) VALUES ($1, $2, $3) RETURNING id`,
    [sample.external_id, sample.name, JSON.stringify(sample.fees)],
  );
  const credentials = { email: 'bench-events@example.com', password: 'bench password 1' };
  const admin = await call(baseUrl, 'POST', '/user/register/', { ...credentials, name: 'Bench' });
  await sql.query('UPDATE users SET is_superuser = true WHERE id = $1', [admin.id]);
  const token = (await call(baseUrl, 'POST', '/user/login/', credentials)).access as string;
  const seller = await call(
    baseUrl,
    'POST',
    '/sellers/',
    { name: 'Bench seller', document: '11222333000181', email: 'bench@example.com' },
    token,
  );
  await call(baseUrl, 'PATCH', `/sellers/${seller.id}/`, { rate_plan: rows[0].id }, token);
  return { token, sellerId: seller.id as string };
}

async function createEvent(baseUrl: string, token: string, sellerId: string, quantity: number) {
  const day = 86_400_000;
  const event = await call(
    baseUrl,
    'POST',
    '/event/event/',
    {
      seller: sellerId,
      name: 'Bench festival',
      starts_at: new Date(Date.now() + 30 * day).toISOString(),
      ends_at: new Date(Date.now() + 31 * day).toISOString(),
      sales_start_at: new Date(Date.now() - day).toISOString(),
      sales_end_at: new Date(Date.now() + 29 * day).toISOString(),
      payment_types: ['credit'],
      ticket_types: [{ name: 'Pista', price: '80.00', quantity, max_per_order: 3 }],
    },
    token,
  );
  await call(baseUrl, 'PATCH', `/event/event/${event.id}/`, { status: 'published' }, token);
  return { id: event.id as string, ticketTypeId: event.ticket_types[0].id as string };
}
