import { DataSource } from 'typeorm';
import { SplitRuleDeletedEventsCarryTheRule1763804200000 } from '../../migrations/1763804200000-split-rule-deleted-events-carry-the-rule';
import { encodeCursor } from '../../src/common/pagination/pagination';
import { LogCapture } from '../support/log-capture';
import { TransactionsService } from '../../src/transactions/transactions.service';
import { SYSTEM_VOID_REASONS } from '../../src/transactions/void-reasons';
import { createSeller, createUser, TestUser } from '../support/identity';
import { CARDS, PayingSeller, payingSeller } from '../support/payments';
import { changeBehindTheApp, startTestApp, TestApp } from '../support/test-app';

/** Unified transactions (spec 2.5, 4.2; API.md section 8). */
describe('unified transactions', () => {
  let t: TestApp;
  let superuser: TestUser;
  let s: PayingSeller;
  const logs = new LogCapture();
  const base = () => `/unified/accounts/sellers/${s.sellerId}/transactions`;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    t.http.post(base(), body, { token: superuser.access, headers });
  const events = async (type: string, transactionId: string) =>
    (await t.db.query(`SELECT data FROM outbox_events WHERE type = $1 AND data->>'id' = $2`, [type, transactionId]))
      .rows;

  beforeAll(async () => {
    t = await startTestApp({
      env: { LOG_LEVEL: 'trace' },
      logDestination: logs,
    });
    superuser = await createUser(t, { superuser: true });
    s = await payingSeller(t, superuser);
  });
  afterAll(() => t.close());

  describe('charges', () => {
    it('approves a test card and stores the resolution, the brand and the last 4 digits only', async () => {
      const res = await post({
        amount: '100.00',
        payment_type: 'credit',
        installments: 1,
        entry_mode: 'card_present',
        card: CARDS.visa,
        description: 'Pedido 1',
        reference: 'order-1',
        customer: { name: 'Ana', email: 'ana@example.com', document: '529.982.247-25' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        seller: s.sellerId,
        amount: '100.00',
        currency: 'BRL',
        payment_type: 'credit',
        installments: 1,
        card_brand: 'Visa',
        card_last4: '1111',
        entry_mode: 'card_present',
        status: 'approved',
        description: 'Pedido 1',
        source: 'api',
        reference: 'order-1',
        customer: { name: 'Ana', email: 'ana@example.com', document: '529.982.247-25' },
        fees: { percentage: '2.99', fixed: '0.50', amount: '3.49' },
        rate_plan: s.ratePlanId,
        split_plan: s.splitPlanId,
        split: {
          shares: [
            { label: 'Programador', role: 'developer', percentage: '0.5', amount: '0.50', recipient: s.developer },
            { label: 'Master', role: 'participant', percentage: '1', amount: '1.00', recipient: s.master },
            { label: 'Agente', role: 'participant', percentage: '0.75', amount: '0.75', recipient: null },
          ],
          developer_amount: '0.50',
          participants_amount: '1.75',
          seller_net: '94.26',
        },
        split_rules: [],
        pix: null,
        boleto: null,
        decline_reason: null,
        voided_at: null,
        void_reason: null,
      });
      expect(res.body.approved_at).toEqual(expect.any(String));
      // Both events carry the record as the API answered it (sent to the database once).
      expect(await events('transaction.created', res.body.id)).toEqual([{ data: res.body }]);
      expect(await events('transaction.approved', res.body.id)).toEqual([{ data: res.body }]);
    });

    it('records a declined charge: 201 with status declined and the reason', async () => {
      const res = await post({ amount: '20.00', payment_type: 'credit', card: CARDS.declined });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        status: 'declined',
        decline_reason: 'card_declined',
        approved_at: null,
        card_last4: '0002',
      });
      expect(await events('transaction.declined', res.body.id)).toHaveLength(1);
      expect(await events('transaction.approved', res.body.id)).toHaveLength(0);
    });

    it('keeps pix pending with a QR code until the sandbox confirms it', async () => {
      const res = await post({ amount: '50.00', payment_type: 'pix' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        status: 'pending',
        payment_type: 'pix',
        card_brand: null,
        card_last4: null,
        entry_mode: 'online',
      });
      expect(res.body.pix).toEqual({
        qr_code: expect.stringContaining('BR.GOV.BCB.PIX'),
        expires_at: expect.any(String),
      });
      expect(res.body.pix.qr_code).toContain('540550.00');
      expect(res.body.fees.amount).toBe('0.50');
      expect(res.body.split.shares.map((x: { amount: string }) => x.amount)).toEqual(['0.10']);

      const confirmed = await t.http.post(`/sandbox/transactions/${res.body.id}/confirm`, undefined, {
        token: superuser.access,
      });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toMatchObject({ id: res.body.id, status: 'approved', approved_at: expect.any(String) });
      expect(await events('transaction.approved', res.body.id)).toHaveLength(1);
      const again = await t.http.post(`/sandbox/transactions/${res.body.id}/confirm`, undefined, {
        token: superuser.access,
      });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_state');
    });

    it('issues a boleto with a digitable line and due date, for a customer with name and document', async () => {
      const missing = await post({ amount: '80.00', payment_type: 'boleto' });
      expect(missing.status).toBe(400);
      expect(Object.keys(missing.body.errors).sort()).toEqual(['customer.document', 'customer.name']);
      const res = await post({
        amount: '80.00',
        payment_type: 'boleto',
        customer: { name: 'Ana', document: '52998224725' },
      });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe('pending');
      expect(res.body.boleto.digitable_line).toMatch(/^\d{47}$/);
      expect(res.body.boleto.due_date).toMatch(/^\d{4}-\d\d-\d\d$/);
      expect(res.body.fees).toEqual({ percentage: '0', fixed: '3.49', amount: '3.49' });
    });

    it('resolves a boleto paid at the counter (card_present) by split_details, as simulate does, and online by split_details_online', async () => {
      const boleto = { amount: '100.00', payment_type: 'boleto', customer: { name: 'Ana', document: '52998224725' } };
      const atCounter = await post({ ...boleto, entry_mode: 'card_present' });
      expect(atCounter.status).toBe(201);
      expect(atCounter.body.entry_mode).toBe('card_present');
      // split_details has debit1.Boleto {Master: 0.3}; split_details_online has no Boleto cell.
      expect(atCounter.body.split.shares).toEqual([
        expect.objectContaining({ label: 'Master', percentage: '0.3', amount: '0.30' }),
      ]);
      const simulated = await t.http.post(
        `/plans/plans/split/${s.splitPlanId}/simulate`,
        { amount: '100.00', payment_type: 'boleto', entry_mode: 'card_present' },
        { token: superuser.access },
      );
      expect(simulated.body.shares.map((share: { amount: string }) => share.amount)).toEqual(['0.30']);
      expect(simulated.body.seller_net).toBe(atCounter.body.split.seller_net);
      const online = await post(boleto);
      expect(online.body.split.shares).toEqual([]);
    });

    it.each([
      [{ amount: '10.00', payment_type: 'credit' }, 'card'],
      [{ amount: '10.00', payment_type: 'credit', card: { ...CARDS.visa, number: '4111111111111112' } }, 'card.number'],
      [{ amount: '10.00', payment_type: 'credit', card: { ...CARDS.visa, exp_year: 2020 } }, 'card.exp_year'],
      [{ amount: '10.00', payment_type: 'credit', card: { ...CARDS.visa, cvv: '12' } }, 'card.cvv'],
      [{ amount: '10.00', payment_type: 'pix', card: CARDS.visa }, 'card'],
      [{ amount: '10.00', payment_type: 'pix', installments: 2 }, 'installments'],
      [{ amount: '10.00', payment_type: 'debit', installments: 2, card: CARDS.visa }, 'installments'],
      [{ amount: '10.001', payment_type: 'pix' }, 'amount'],
      [{ amount: 10, payment_type: 'pix' }, 'amount'],
      [{ amount: '10.00', payment_type: 'cash' }, 'payment_type'],
      [{ amount: '10.00', payment_type: 'credit', installments: 22, card: CARDS.visa }, 'installments'],
      [{ amount: '10.00', payment_type: 'pix', customer: { document: '123' } }, 'customer.document'],
    ])('refuses %j with 400 naming %s', async (body, field) => {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(Object.keys(res.body.errors)).toContain(field);
    });

    it.each([
      ['Discover', '6011111111111117'],
      ['JCB', '3530111333300000'],
    ])(
      'prices a %s card, which the rate plan does not name, by its "Todas as bandeiras %%" cell',
      async (brand, number) => {
        const res = await post({
          amount: '100.00',
          payment_type: 'credit',
          installments: 1,
          entry_mode: 'online',
          card: { ...CARDS.visa, number },
        });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({
          card_brand: brand,
          status: 'approved',
          fees: { percentage: '3.49', fixed: '0.50' },
        });
      },
    );

    it('refuses a payment the rate plan does not price, and a seller without a rate plan', async () => {
      const res = await post({ amount: '100.00', payment_type: 'credit', installments: 15, card: CARDS.visa });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('payment_method_not_accepted');
      const bare = await createSeller(t, superuser, 'No plans');
      const refused = await t.http.post(
        `/unified/accounts/sellers/${bare}/transactions`,
        { amount: '1.00', payment_type: 'pix' },
        { token: superuser.access },
      );
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('seller_has_no_rate_plan');
    });

    it("refuses a charge while the seller's rate plan is inactive, and writes nothing", async () => {
      const other = await payingSeller(t, superuser);
      const count = async () =>
        (await t.db.query('SELECT count(*)::int AS n FROM transactions WHERE seller_id = $1', [other.sellerId])).rows[0]
          .n;
      await changeBehindTheApp(
        t,
        'UPDATE rate_plans SET active = false WHERE id = $1',
        [other.ratePlanId],
        'rate_plans:',
      );
      try {
        const refused = await t.http.post(
          `/unified/accounts/sellers/${other.sellerId}/transactions`,
          { amount: '1.00', payment_type: 'pix' },
          { token: superuser.access },
        );
        expect(refused.status).toBe(400);
        expect(refused.body.code).toBe('rate_plan_inactive');
        expect(await count()).toBe(0);
      } finally {
        await changeBehindTheApp(
          t,
          'UPDATE rate_plans SET active = true WHERE id = $1',
          [other.ratePlanId],
          'rate_plans:',
        );
      }
      const accepted = await t.http.post(
        `/unified/accounts/sellers/${other.sellerId}/transactions`,
        { amount: '1.00', payment_type: 'pix' },
        { token: superuser.access },
      );
      expect(accepted.status).toBe(201);
      expect(accepted.body.split_plan).toBe(other.splitPlanId);
    });

    it('never writes the card number or CVV to the database or the logs', async () => {
      const card = {
        number: '5555555555554444',
        holder_name: 'CARD HOLDER',
        exp_month: 11,
        exp_year: 2032,
        cvv: '8642',
      };
      const res = await post({ amount: '12.34', payment_type: 'credit', card }, { 'idempotency-key': 'card-secrecy' });
      expect(res.status).toBe(201);
      const everything: string[] = [];
      const tables = await t.db.query(
        `SELECT table_schema, table_name FROM information_schema.tables
         WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
      );
      for (const { table_schema, table_name } of tables.rows) {
        const { rows } = await t.db.query(
          `SELECT coalesce(string_agg(row_to_json(x)::text, ' '), '') AS text FROM "${table_schema}"."${table_name}" x`,
        );
        everything.push(rows[0].text);
      }
      const database = everything.join(' ');
      expect(database).toContain(res.body.id);
      expect(database).not.toContain(card.number);
      expect(database).not.toContain('"8642"');
      const logged = logs.text;
      expect(logged).toContain('request completed');
      expect(logged).toContain(res.headers.get('x-request-id'));
      expect(logged).not.toContain(card.number);
      expect(logged).not.toContain(card.number.slice(0, 12));
      // Four digits also turn up inside request ids, UUIDs and timestamps: a leaked CVV shows as
      // a JSON string value, or next to its field name.
      expect(logged).not.toMatch(/"8642"|cvv\W{0,6}8642|8642\W{0,6}cvv/i);
      expect(database).not.toMatch(/cvv\W{0,6}8642/i);
    });
  });

  describe('interrupted charges', () => {
    /** As if the process had died after writing the pending transaction, before recording the processor's answer. */
    const interrupt = async (ids: string[]) => {
      await t.db.query(
        `UPDATE transactions SET status = 'pending', approved_at = NULL, processor_reference = NULL, pix = NULL,
           decline_reason = NULL, created_at = now() - interval '11 minutes' WHERE id = ANY($1)`,
        [ids],
      );
      await t.db.query(`DELETE FROM outbox_events WHERE data->>'id' = ANY($1)`, [ids]);
    };

    it('voids card charges left pending that the processor never received, at the processor too, and leaves pix alone', async () => {
      const card = (await post({ amount: '15.00', payment_type: 'credit', card: CARDS.visa })).body;
      const pix = (await post({ amount: '15.00', payment_type: 'pix' })).body;
      await interrupt([card.id, pix.id]);
      await t.db.query('DELETE FROM sandbox_charges WHERE transaction_id = $1', [card.id]);
      const reconciled = await t.app.get(TransactionsService).reconcileInterrupted();
      expect(reconciled).toBeGreaterThanOrEqual(1);
      const after = await t.http.get(`${base()}/${card.id}`, { token: superuser.access });
      expect(after.body).toMatchObject({ status: 'voided', void_reason: 'charge_interrupted' });
      expect((await t.http.get(`${base()}/${pix.id}`, { token: superuser.access })).body.status).toBe('pending');
      expect(await events('transaction.voided', card.id)).toHaveLength(1);
      const jobs = await t.db.query(
        `SELECT data FROM pgboss.job WHERE name = 'transactions.processor-void' AND data->>'transactionId' = $1`,
        [card.id],
      );
      expect(jobs.rows).toHaveLength(1);
      expect(await t.app.get(TransactionsService).reconcileInterrupted()).toBe(0);
    });

    it('settles card charges left pending that the processor made, as the processor says', async () => {
      const approved = (await post({ amount: '16.00', payment_type: 'credit', card: CARDS.visa })).body;
      const declined = (await post({ amount: '16.00', payment_type: 'credit', card: CARDS.declined })).body;
      await interrupt([approved.id, declined.id]);
      expect(await t.app.get(TransactionsService).reconcileInterrupted()).toBe(2);
      const a = await t.http.get(`${base()}/${approved.id}`, { token: superuser.access });
      expect(a.body).toMatchObject({ status: 'approved', void_reason: null });
      const d = await t.http.get(`${base()}/${declined.id}`, { token: superuser.access });
      expect(d.body).toMatchObject({ status: 'declined', decline_reason: 'card_declined' });
      expect(await events('transaction.created', approved.id)).toHaveLength(1);
      expect(await events('transaction.approved', approved.id)).toHaveLength(1);
      expect(await events('transaction.declined', declined.id)).toHaveLength(1);
      const voids = await t.db.query(
        `SELECT 1 FROM pgboss.job WHERE name = 'transactions.processor-void' AND data->>'transactionId' = ANY($1)`,
        [[approved.id, declined.id]],
      );
      expect(voids.rows).toHaveLength(0);
    });
  });

  describe('idempotency', () => {
    it('replays a create with the same key: one charge, the same answer', async () => {
      const body = { amount: '33.00', payment_type: 'credit', card: CARDS.mastercard };
      const first = await post(body, { 'idempotency-key': 'create-once' });
      const again = await post(body, { 'idempotency-key': 'create-once' });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM transactions WHERE id = $1`, [first.body.id]);
      expect(rows[0].n).toBe(1);
      const other = await post({ ...body, amount: '34.00' }, { 'idempotency-key': 'create-once' });
      expect(other.status).toBe(422);
    });
  });

  describe('read', () => {
    it('gives the same structure in the list and the detail', async () => {
      const created = (await post({ amount: '7.00', payment_type: 'credit', card: CARDS.visa })).body;
      const detail = await t.http.get(`${base()}/${created.id}/`, { token: superuser.access });
      expect(detail.body).toEqual(created);
      const list = await t.http.get(`${base()}?limit=100`, { token: superuser.access });
      expect(list.body.results.find((x: { id: string }) => x.id === created.id)).toEqual(created);
    });

    it('filters and paginates newest first, or oldest first on request', async () => {
      const seller = await payingSeller(t, superuser);
      const path = `/unified/accounts/sellers/${seller.sellerId}/transactions`;
      const make = (body: object) => t.http.post(path, body, { token: superuser.access });
      const a = (await make({ amount: '10.00', payment_type: 'credit', card: CARDS.visa })).body;
      const b = (await make({ amount: '20.00', payment_type: 'pix' })).body;
      const c = (await make({ amount: '30.00', payment_type: 'credit', card: CARDS.declined })).body;
      const d = (
        await make({ amount: '40.00', payment_type: 'credit', card: CARDS.mastercard, entry_mode: 'card_present' })
      ).body;
      const ids = async (query: string) =>
        (await t.http.get(`${path}?${query}`, { token: superuser.access })).body.results.map(
          (x: { id: string }) => x.id,
        );

      expect(await ids('')).toEqual([d.id, c.id, b.id, a.id]);
      expect(await ids('ordering=created_at')).toEqual([a.id, b.id, c.id, d.id]);
      expect(await ids('status=approved')).toEqual([d.id, a.id]);
      expect(await ids('status=pending')).toEqual([b.id]);
      expect(await ids('payment_type=pix')).toEqual([b.id]);
      expect(await ids('card_brand=MasterCard')).toEqual([d.id]);
      expect(await ids('entry_mode=card_present')).toEqual([d.id]);
      expect(await ids('source=api&amount_min=20.00&amount_max=30')).toEqual([c.id, b.id]);
      expect(await ids('reference=nope')).toEqual([]);
      expect(
        await ids(
          `created_after=${encodeURIComponent(a.created_at)}&created_before=${encodeURIComponent(d.created_at)}`,
        ),
      ).toEqual([c.id, b.id, a.id]);

      const first = await t.http.get(`${path}?limit=3`, { token: superuser.access });
      expect(first.body.results).toHaveLength(3);
      const second = await t.http.get(`${path}?limit=3&cursor=${first.body.next_cursor}`, { token: superuser.access });
      expect(second.body.results.map((x: { id: string }) => x.id)).toEqual([a.id]);
      expect(second.body.next_cursor).toBeNull();

      for (const bad of [
        'status=lost',
        'amount_min=1.234',
        'created_after=yesterday',
        'created_after=2026-W01',
        'created_after=2026-02-30T00:00:00Z', // a day February does not have (Date would roll it into March)
        'created_before=2026-11-21T24:00:00Z',
        'created_before=20260101',
        'limit=0',
        'limit=1e1',
        'limit=0x10',
        'limit=1.5',
        'payment_type=cash',
        'source=bogus',
        'card_brand=',
        'card_brand=visa',
        'card_brand=Mastercard',
      ]) {
        const refused = await t.http.get(`${path}?${bad}`, { token: superuser.access });
        expect({ bad, status: refused.status }).toEqual({ bad, status: 400 });
      }
      // A date that names no instant is told why.
      for (const [query, message] of [
        ['created_after=2026-02-30T00:00:00Z', 'names a day that does not exist: 2026-02 has 28 days'],
        [
          'created_before=2026-11-21T24:00:00Z',
          'names a time that does not exist (hours 00 to 23, minutes and seconds 00 to 59)',
        ],
        [
          'created_after=2026-11-21T12:00:00+03:00',
          'has a space where its offset\'s "+" belongs: in a query string, write "+" as %2B',
        ],
      ]) {
        const refused = await t.http.get(`${path}?${query}`, { token: superuser.access });
        const field = query.split('=')[0];
        expect(refused.body.errors).toEqual({ [field]: [message] });
      }
      const encoded = await t.http.get(`${path}?created_after=2026-11-21t12:00:00%2B03:00`, {
        token: superuser.access,
      });
      expect(encoded.status).toBe(200);
    });

    it('orders by creation time, those created at the same instant in the order they were written, page after page', async () => {
      const seller = await payingSeller(t, superuser);
      const path = `/unified/accounts/sellers/${seller.sellerId}/transactions`;
      const make = async (): Promise<string> =>
        (await t.http.post(path, { amount: '10.00', payment_type: 'pix' }, { token: superuser.access })).body.id;
      const [a, b, c, d] = [await make(), await make(), await make(), await make()];
      // Creation times the order of writing does not follow: d older than all, b and c at one instant.
      const createdAt: Array<[string, string]> = [
        [a, '2026-01-01T10:00:00Z'],
        [b, '2026-01-01T11:00:00Z'],
        [c, '2026-01-01T11:00:00Z'],
        [d, '2026-01-01T09:00:00Z'],
      ];
      for (const [id, at] of createdAt) {
        await t.db.query('UPDATE transactions SET created_at = $2 WHERE id = $1', [id, at]);
      }
      type Page = { status: number; body: { results: Array<{ id: string }>; next_cursor: string | null } };
      const walk = async (query: string): Promise<string[]> => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const after: string = cursor ? `&cursor=${cursor}` : '';
          const res = (await t.http.get(`${path}?limit=1&${query}${after}`, { token: superuser.access })) as Page;
          expect(res.status).toBe(200);
          seen.push(...res.body.results.map((x) => x.id));
          cursor = res.body.next_cursor;
        } while (cursor && seen.length < 10);
        return seen;
      };
      expect(await walk('')).toEqual([c, b, a, d]);
      expect(await walk('ordering=created_at')).toEqual([d, a, b, c]);
      expect(await walk('payment_type=pix')).toEqual([c, b, a, d]);
      expect(await walk('created_after=2026-01-01T09:30:00Z&created_before=2026-01-01T11:00:00Z')).toEqual([a]);
      expect(await walk('created_after=2026-01-01T10:00:00Z&ordering=created_at')).toEqual([a, b, c]);

      // A cursor naming another seller's row places nothing: the page is empty, whatever that row's time.
      const other = await payingSeller(t, superuser);
      const foreign = await t.http.post(
        `/unified/accounts/sellers/${other.sellerId}/transactions`,
        { amount: '10.00', payment_type: 'pix' },
        { token: superuser.access },
      );
      const { rows } = await t.db.query('SELECT seq::text AS seq FROM transactions WHERE id = $1', [foreign.body.id]);
      const page = await t.http.get(`${path}?cursor=${encodeCursor(rows[0].seq, true)}`, { token: superuser.access });
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ results: [], next_cursor: null });
    });

    it('keeps the resolution it was charged with when the plans change later', async () => {
      const own = await payingSeller(t, superuser); // a seller of its own: this test changes its plans
      const charge = async () =>
        (
          await t.http.post(
            `/unified/accounts/sellers/${own.sellerId}/transactions`,
            { amount: '100.00', payment_type: 'credit', card: CARDS.visa, entry_mode: 'card_present' },
            { token: superuser.access },
          )
        ).body;
      const created = await charge();
      const patched = await t.http.patch(`/sellers/${own.sellerId}`, { split_plan: null }, { token: superuser.access });
      expect(patched.status).toBe(200);

      const after = await charge();
      expect(after.split.shares).toEqual([]);
      const before = await t.http.get(`/unified/accounts/sellers/${own.sellerId}/transactions/${created.id}`, {
        token: superuser.access,
      });
      expect(before.body.split).toEqual(created.split);
      expect(before.body.split_plan).toBe(own.splitPlanId);
    });
  });

  describe('void', () => {
    it('voids an approved transaction once; a second void is 409', async () => {
      const created = (await post({ amount: '10.00', payment_type: 'credit', card: CARDS.visa })).body;
      const res = await t.http.post(
        `${base()}/${created.id}/void`,
        { reason: 'customer asked' },
        { token: superuser.access },
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: created.id,
        status: 'voided',
        void_reason: 'customer asked',
        voided_at: expect.any(String),
      });
      // The void is the record's last change: updated_at is its moment (and the approval's was too).
      expect(res.body.updated_at).toBe(res.body.voided_at);
      expect(created.updated_at).toBe(created.approved_at);
      expect(await events('transaction.voided', created.id)).toHaveLength(1);
      const again = await t.http.post(`${base()}/${created.id}/void`, undefined, { token: superuser.access });
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_state');
    });

    it("refuses a reason the platform gives its own voids (it says what happened to a payment: a checkout's order expired), and voids nothing", async () => {
      const created = (await post({ amount: '10.00', payment_type: 'pix' })).body;
      for (const reason of [...Object.values(SYSTEM_VOID_REASONS), ' Checkout_Expired ']) {
        const res = await t.http.post(`${base()}/${created.id}/void`, { reason }, { token: superuser.access });
        expect({ reason, status: res.status, errors: res.body.errors }).toEqual({
          reason,
          status: 400,
          errors: {
            reason: [`"${reason.trim()}" is a reason the platform gives its own voids; give the reason in other words`],
          },
        });
      }
      const notText = await t.http.post(`${base()}/${created.id}/void`, { reason: 7 }, { token: superuser.access });
      expect({ status: notText.status, errors: notText.body.errors }).toEqual({
        status: 400,
        errors: { reason: ['must be a string'] },
      });
      expect((await t.http.get(`${base()}/${created.id}`, { token: superuser.access })).body.status).toBe('pending');
      expect(await events('transaction.voided', created.id)).toHaveLength(0);
      // In the seller's own words it is voided.
      const own = await t.http.post(
        `${base()}/${created.id}/void`,
        { reason: 'checkout expired on our side' },
        { token: superuser.access },
      );
      expect(own.body).toMatchObject({ status: 'voided', void_reason: 'checkout expired on our side' });
    });

    it('voids a pending one without a body, and refuses a declined one', async () => {
      const pending = (await post({ amount: '10.00', payment_type: 'pix' })).body;
      const res = await t.http.post(`${base()}/${pending.id}/void`, undefined, { token: superuser.access });
      expect(res.body).toMatchObject({ status: 'voided', void_reason: null });
      const declined = (await post({ amount: '10.00', payment_type: 'credit', card: CARDS.declined })).body;
      expect((await t.http.post(`${base()}/${declined.id}/void`, {}, { token: superuser.access })).status).toBe(409);
    });

    it('lets exactly one of concurrent voids succeed', async () => {
      const created = (await post({ amount: '10.00', payment_type: 'credit', card: CARDS.visa })).body;
      const results = await Promise.all(
        Array.from({ length: 8 }, () => t.http.post(`${base()}/${created.id}/void`, {}, { token: superuser.access })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
      expect(await events('transaction.voided', created.id)).toHaveLength(1);
    });
  });

  describe('split rules', () => {
    it('adds fixed and percentage rules, shows them on the transaction, and removes them', async () => {
      const created = (
        await post({ amount: '100.00', payment_type: 'credit', card: CARDS.visa, entry_mode: 'card_present' })
      ).body;
      const fixed = await t.http.post(
        `${base()}/${created.id}/split`,
        // An upper-case id is answered (and sent to webhooks) as stored, lower-cased.
        { recipient: s.master.toUpperCase(), amount: '10.00', amount_type: 'fixed' },
        { token: superuser.access },
      );
      expect(fixed.status).toBe(201);
      expect(fixed.body).toEqual({
        id: expect.any(String),
        recipient: s.master,
        amount: '10.00',
        amount_type: 'fixed',
        created_at: expect.any(String),
      });
      const pct = await t.http.post(
        `${base()}/${created.id}/split`,
        { recipient: s.developer, amount: '12.5', amount_type: 'percentage' },
        { token: superuser.access },
      );
      expect(pct.body).toMatchObject({ amount: '12.5', amount_type: 'percentage' });
      const detail = await t.http.get(`${base()}/${created.id}`, { token: superuser.access });
      expect(detail.body.split_rules.map((r: { id: string }) => r.id)).toEqual([fixed.body.id, pct.body.id]);
      expect(
        (
          await t.db.query(
            `SELECT 1 FROM outbox_events WHERE type = 'transaction.split_rule.created' AND data->>'transaction' = $1
                AND data->'split_rule'->>'recipient' IN ($2, $3)`,
            [created.id, s.master, s.developer],
          )
        ).rowCount,
      ).toBe(2);

      expect(
        (await t.http.delete(`${base()}/${created.id}/split/${fixed.body.id}`, { token: superuser.access })).status,
      ).toBe(204);
      expect(
        (await t.http.delete(`${base()}/${created.id}/split/${fixed.body.id}`, { token: superuser.access })).status,
      ).toBe(404);
      expect(
        (
          await t.http.delete(`${base()}/${created.id}/split/7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11`, {
            token: superuser.access,
          })
        ).status,
      ).toBe(404);
      const after = await t.http.get(`${base()}/${created.id}`, { token: superuser.access });
      expect(after.body.split_rules.map((r: { id: string }) => r.id)).toEqual([pct.body.id]);
      expect(
        (await t.http.delete(`${base()}/${created.id}/split/${pct.body.id}`, { token: superuser.access })).status,
      ).toBe(204);
      // Each removal's event carries the rule as the API answered it, as the creation's does.
      const deletedEvents = async () =>
        (
          await t.db.query(
            `SELECT data FROM outbox_events WHERE type = 'transaction.split_rule.deleted' AND data->>'transaction' = $1
              ORDER BY seq`,
            [created.id],
          )
        ).rows.map((r) => r.data);
      const carried = [
        { transaction: created.id, split_rule: fixed.body },
        { transaction: created.id, split_rule: pct.body },
      ];
      expect(await deletedEvents()).toEqual(carried);
      // Events stored by earlier builds (the rule's id alone) are rewritten the same by the migration.
      await t.db.query(
        `UPDATE outbox_events SET data = jsonb_set(data, '{split_rule}', data->'split_rule'->'id')
          WHERE type = 'transaction.split_rule.deleted' AND data->>'transaction' = $1`,
        [created.id],
      );
      expect((await deletedEvents()).map((d) => d.split_rule)).toEqual([fixed.body.id, pct.body.id]);
      const runner = t.app.get(DataSource).createQueryRunner();
      try {
        await new SplitRuleDeletedEventsCarryTheRule1763804200000().up(runner);
      } finally {
        await runner.release();
      }
      expect(await deletedEvents()).toEqual(carried);
    });

    it('validates recipient, amount and the total against the seller net', async () => {
      const created = (
        await post({ amount: '100.00', payment_type: 'credit', card: CARDS.visa, entry_mode: 'card_present' })
      ).body; // net 94.26
      const path = `${base()}/${created.id}/split`;
      const add = (body: object) => t.http.post(path, body, { token: superuser.access });
      expect(
        (await add({ recipient: '7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11', amount: '1.00', amount_type: 'fixed' })).body
          .code,
      ).toBe('recipient_not_found');
      expect(
        (await add({ recipient: s.master, amount: '100.01', amount_type: 'percentage' })).body.errors.amount,
      ).toBeDefined();
      expect((await add({ recipient: s.master, amount: '0', amount_type: 'percentage' })).status).toBe(400);
      expect(
        (await add({ recipient: s.master, amount: '1.234', amount_type: 'fixed' })).body.errors.amount,
      ).toBeDefined();
      expect(
        (await add({ recipient: s.master, amount: '1.00', amount_type: 'share' })).body.errors.amount_type,
      ).toBeDefined();
      // Money is a decimal string only; a percentage may be a JSON number too (API.md section 1).
      const moneyNumber = await add({ recipient: s.master, amount: 1, amount_type: 'fixed' });
      expect({ status: moneyNumber.status, errors: Object.keys(moneyNumber.body.errors) }).toEqual({
        status: 400,
        errors: ['amount'],
      });
      for (const amount of [100.01, 1.00001, -1, [], true]) {
        const bad = await add({ recipient: s.master, amount, amount_type: 'percentage' });
        expect({ amount, status: bad.status, errors: Object.keys(bad.body.errors) }).toEqual({
          amount,
          status: 400,
          errors: ['amount'],
        });
      }
      const numeric = await add({ recipient: s.master, amount: 2.5, amount_type: 'percentage' });
      expect(numeric.status).toBe(201);
      expect(numeric.body).toMatchObject({ amount: '2.5', amount_type: 'percentage' });
      // 2.5% of 100.00 is 2.50 of the net 94.26: 91.76 is left.
      expect((await add({ recipient: s.master, amount: '91.77', amount_type: 'fixed' })).body.code).toBe(
        'split_exceeds_net',
      );
      expect((await add({ recipient: s.master, amount: '91.76', amount_type: 'fixed' })).status).toBe(201);
      expect((await add({ recipient: s.master, amount: '0.01', amount_type: 'fixed' })).body.code).toBe(
        'split_exceeds_net',
      );
    });

    it('fills the net exactly with fixed rules', async () => {
      const created = (
        await post({ amount: '100.00', payment_type: 'credit', card: CARDS.visa, entry_mode: 'card_present' })
      ).body; // net 94.26
      const add = (body: object) => t.http.post(`${base()}/${created.id}/split`, body, { token: superuser.access });
      expect((await add({ recipient: s.master, amount: '94.27', amount_type: 'fixed' })).body.code).toBe(
        'split_exceeds_net',
      );
      expect((await add({ recipient: s.master, amount: '94.26', amount_type: 'fixed' })).status).toBe(201);
      expect((await add({ recipient: s.master, amount: '0.01', amount_type: 'fixed' })).body.code).toBe(
        'split_exceeds_net',
      );
    });

    it('refuses a percentage that comes to less than a cent, and keeps rules of a voided transaction as history (an unknown one is 404)', async () => {
      const created = (await post({ amount: '1.00', payment_type: 'credit', card: CARDS.visa })).body;
      const tiny = await t.http.post(
        `${base()}/${created.id}/split`,
        { recipient: s.master, amount: '0.0001', amount_type: 'percentage' },
        { token: superuser.access },
      );
      expect(tiny.status).toBe(400);
      expect(tiny.body.errors.amount).toBeDefined();
      const rule = await t.http.post(
        `${base()}/${created.id}/split`,
        { recipient: s.master, amount: '0.10', amount_type: 'fixed' },
        { token: superuser.access },
      );
      await t.http.post(`${base()}/${created.id}/void`, {}, { token: superuser.access });
      const removal = await t.http.delete(`${base()}/${created.id}/split/${rule.body.id}`, { token: superuser.access });
      expect(removal.status).toBe(409);
      expect(removal.body.code).toBe('invalid_state');
      expect((await t.http.get(`${base()}/${created.id}`, { token: superuser.access })).body.split_rules).toHaveLength(
        1,
      );
      // A rule it never had is unknown, whatever its state.
      const unknown = await t.http.delete(`${base()}/${created.id}/split/00000000-0000-4000-8000-000000000000`, {
        token: superuser.access,
      });
      expect({ status: unknown.status, code: unknown.body.code }).toEqual({
        status: 404,
        code: 'split_rule_not_found',
      });
    });

    it('refuses rules on voided and declined transactions', async () => {
      const declined = (await post({ amount: '10.00', payment_type: 'credit', card: CARDS.declined })).body;
      const voided = (await post({ amount: '10.00', payment_type: 'credit', card: CARDS.visa })).body;
      await t.http.post(`${base()}/${voided.id}/void`, {}, { token: superuser.access });
      for (const id of [declined.id, voided.id]) {
        const res = await t.http.post(
          `${base()}/${id}/split`,
          { recipient: s.master, amount: '1.00', amount_type: 'fixed' },
          { token: superuser.access },
        );
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('invalid_state');
      }
    });

    it('never lets concurrent additions exceed the seller net', async () => {
      const created = (
        await post({ amount: '100.00', payment_type: 'credit', card: CARDS.visa, entry_mode: 'card_present' })
      ).body; // net 94.26
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          t.http.post(
            `${base()}/${created.id}/split`,
            { recipient: s.master, amount: '10.00', amount_type: 'fixed' },
            { token: superuser.access },
          ),
        ),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((x) => x === 201)).toHaveLength(9);
      expect(statuses.filter((x) => x === 400)).toHaveLength(11);
      const { rows } = await t.db.query(
        `SELECT sum(amount_cents)::int AS total FROM transaction_split_rules WHERE transaction_id = $1 AND deleted_at IS NULL`,
        [created.id],
      );
      expect(rows[0].total).toBe(9_000);
    });
  });
});
