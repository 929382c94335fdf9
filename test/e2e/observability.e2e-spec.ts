import { Controller, Get, Logger, Module } from '@nestjs/common';
import { Authenticated } from '../../src/auth/access.decorators';
import { createApiKey, createUser, TestUser } from '../support/identity';
import { LogCapture } from '../support/log-capture';
import { CARDS, PayingSeller, payingSeller } from '../support/payments';
import { startTestApp, TestApp } from '../support/test-app';

/** A route that logs from deep inside a request, the way services do (Nest's Logger). */
@Controller('test-fixtures/observability')
class LoggingController {
  private readonly logger = new Logger('Observability');

  @Get(':seller_id')
  @Authenticated({ seller: 'seller_id', credentials: 'jwt_or_api_key' })
  async log() {
    await new Promise((resolve) => setImmediate(resolve));
    this.logger.log('deep inside the request');
    return { ok: true };
  }
}

@Module({ controllers: [LoggingController] })
class LoggingModule {}

/** Logs that say which request, credential and seller they belong to, and /metrics after actions. */
describe('observability', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: PayingSeller;
  const logs = new LogCapture();
  const linesOf = (requestId: string) =>
    logs.lines.map((l) => JSON.parse(l)).filter((l) => JSON.stringify(l).includes(requestId));

  beforeAll(async () => {
    t = await startTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: logs, imports: [LoggingModule] });
    superuser = await createUser(t, { superuser: true });
    seller = await payingSeller(t, superuser);
  });
  afterAll(() => t.close());

  describe('request logs', () => {
    it('puts the request id, the user credential and the seller on every line of a request', async () => {
      const res = await t.http.get(`/test-fixtures/observability/${seller.sellerId}`, { token: superuser.access });
      expect(res.status).toBe(200);
      const requestId = res.headers.get('x-request-id')!;
      const lines = linesOf(requestId);
      expect(lines.map((l) => l.msg).sort()).toEqual(['deep inside the request', 'request completed']);
      for (const line of lines) {
        expect(line).toMatchObject({
          request_id: requestId,
          user_id: superuser.id,
          credential_id: expect.any(String),
          seller_id: seller.sellerId,
        });
      }
      // request_id written once per line, not repeated by the framework's own logger
      const raw = logs.lines.find((l) => l.includes('request completed') && l.includes(requestId))!;
      expect(raw.split('"request_id"')).toHaveLength(2);
    });

    it('names the API key as the credential and its seller', async () => {
      const key = await createApiKey(t, superuser.access, seller.sellerId);
      const res = await t.http.get(`/test-fixtures/observability/${seller.sellerId}`, { token: key.key });
      expect(res.status).toBe(200);
      for (const line of linesOf(res.headers.get('x-request-id')!)) {
        expect(line).toMatchObject({ credential_id: `api_key:${key.id}`, seller_id: seller.sellerId });
        expect(line.user_id).toBeUndefined();
      }
    });

    it('has the request id on lines of unauthenticated and refused requests', async () => {
      const res = await t.http.get(`/test-fixtures/observability/${seller.sellerId}`, { token: 'nope' });
      expect(res.status).toBe(401);
      const lines = linesOf(res.body.request_id);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(line.request_id).toBe(res.body.request_id);
        expect(line.credential_id).toBeUndefined();
      }
    });
  });

  describe('/metrics', () => {
    const metrics = async () => (await t.http.get('/metrics')).text;
    const value = (text: string, name: string, labels: Record<string, string> = {}) => {
      const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const match = text
        .split('\n')
        .filter((l) => l.startsWith(name + '{') || l.startsWith(name + ' '))
        .find((l) => wanted.every((w) => l.includes(w)));
      return match === undefined ? undefined : Number(match.slice(match.lastIndexOf(' ') + 1));
    };
    const charge = (body: object, headers: Record<string, string> = {}) =>
      t.http.post(`/unified/accounts/sellers/${seller.sellerId}/transactions`, body, {
        token: superuser.access,
        headers,
      });

    it('counts charges by status and payment type, declines and voids', async () => {
      const before = await metrics();
      const approved = await charge({ amount: '10.00', payment_type: 'credit', card: CARDS.visa });
      expect(approved.body.status).toBe('approved');
      const declined = await charge({ amount: '10.00', payment_type: 'credit', card: CARDS.declined });
      expect(declined.body.status).toBe('declined');
      const pix = await charge({ amount: '5.00', payment_type: 'pix' });
      expect(pix.body.status).toBe('pending');
      const voided = await t.http.post(
        `/unified/accounts/sellers/${seller.sellerId}/transactions/${approved.body.id}/void`,
        {},
        { token: superuser.access },
      );
      expect(voided.status).toBe(200);

      const after = await metrics();
      const delta = (name: string, labels: Record<string, string>) =>
        (value(after, name, labels) ?? 0) - (value(before, name, labels) ?? 0);
      expect(delta('payments_transactions_total', { payment_type: 'credit', status: 'approved' })).toBe(1);
      expect(delta('payments_transactions_total', { payment_type: 'credit', status: 'declined' })).toBe(1);
      expect(delta('payments_transactions_total', { payment_type: 'credit', status: 'voided' })).toBe(1);
      expect(delta('payments_transactions_total', { payment_type: 'pix', status: 'pending' })).toBe(1);
      expect(delta('payments_declines_total', { payment_type: 'credit', reason: declined.body.decline_reason })).toBe(
        1,
      );
      expect(delta('payments_voids_total', { payment_type: 'credit' })).toBe(1);
    });

    it('counts ledger postings and idempotency conflicts', async () => {
      const before = await metrics();
      const accounts = await t.http.get(`/uniconta/seller/${seller.sellerId}/virtualaccounts`, {
        token: superuser.access,
      });
      const account = accounts.body.results[0].id;
      const deposit = await t.http.post(
        `/uniconta/seller/${seller.sellerId}/virtualaccounts/${account}/deposit`,
        { amount: '50.00', description: 'Top-up', method: 'manual', reason: 'wire 42 received' },
        { token: superuser.access },
      );
      expect(deposit.status).toBe(201);
      const first = await charge({ amount: '1.00', payment_type: 'pix' }, { 'idempotency-key': 'metrics-conflict' });
      expect(first.status).toBe(201);
      const reused = await charge({ amount: '2.00', payment_type: 'pix' }, { 'idempotency-key': 'metrics-conflict' });
      expect(reused.status).toBe(422);

      const after = await metrics();
      const delta = (name: string, labels: Record<string, string>) =>
        (value(after, name, labels) ?? 0) - (value(before, name, labels) ?? 0);
      expect(delta('ledger_postings_total', { kind: 'deposit' })).toBe(1);
      expect(delta('idempotency_conflicts_total', { code: 'idempotency_key_reused' })).toBe(1);
    });

    it('reports the outbox backlog, job queue depth per queue, the database pool and the shared connections', async () => {
      const made = await charge({ amount: '3.00', payment_type: 'pix' });
      const read = await t.http.get(`/unified/accounts/sellers/${seller.sellerId}/transactions/${made.body.id}`, {
        token: superuser.access,
      });
      expect(read.status).toBe(200);
      const text = await metrics();
      // Nothing dispatches the outbox in this test: the events written by the tests above wait.
      expect(value(text, 'outbox_pending_events')).toBeGreaterThan(0);
      expect(value(text, 'outbox_oldest_pending_age_seconds')).toBeGreaterThan(0);
      expect(value(text, 'job_queue_jobs', { queue: 'transactions.reconcile-interrupted', state: 'queued' })).toEqual(
        expect.any(Number),
      );
      expect(value(text, 'db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
      expect(value(text, 'db_pool_connections', { state: 'idle' })).toBeGreaterThan(0);
      expect(value(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
      // The detail GET read the charge on the shared connections (opened at their first read).
      expect(value(text, 'db_shared_connections', { set: 'reads', state: 'open' })).toBeGreaterThan(0);
      expect(value(text, 'db_shared_connections', { set: 'reads', state: 'in_flight' })).toBe(0);
      expect(value(text, 'db_shared_connections', { set: 'counters', state: 'in_flight' })).toBe(0);
    });
  });
});
