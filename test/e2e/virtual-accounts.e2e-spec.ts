import { DataSource } from 'typeorm';
import { addDays, brasiliaDate, brasiliaDayEnd } from '../support/brasilia';
import { DepositsService } from '../../src/virtual-accounts/deposits.service';
import { LedgerRepository } from '../../src/virtual-accounts/ledger.repository';
import { MatrixWorld, matrixWorld, RouteCase, sellerRoute, itAnswersEveryCaller } from '../support/auth-matrix';
import { createUser, grant, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/** Virtual accounts (spec 2.6, 4.5; API.md section 9). The payout job runs in this app. */
describe('virtual accounts', () => {
  let t: TestApp;
  let w: MatrixWorld;
  let superuser: TestUser;
  let seller: string;

  beforeAll(async () => {
    t = await startTestApp({ runWorkers: true });
    superuser = await createUser(t, { superuser: true });
    w = await matrixWorld(t, { superuser });
    seller = w.sellerA;
  });
  afterAll(() => t.close());

  const subaccount = async (sellerId = seller, name = 'Conta') =>
    (await t.http.post(`/sellers/${sellerId}/subaccounts`, { name }, { token: superuser.access })).body.id as string;
  const base = (sellerId = seller) => `/uniconta/seller/${sellerId}/virtualaccounts`;
  const act = (
    id: string,
    action: string,
    body: unknown,
    headers: Record<string, string> = {},
    token = superuser.access,
  ) => t.http.post(`${base()}/${id}/${action}`, body, { token, headers });
  const balance = async (id: string) => (await t.http.get(`${base()}/${id}`, { token: superuser.access })).body.balance;
  const statement = async (id: string) =>
    (await t.http.get(`${base()}/${id}/postings?limit=100`, { token: superuser.access })).body.results as Array<
      Record<string, any>
    >;
  /**
   * Opens a database transaction, runs `meanwhile`, then has that transaction (begun before
   * whatever `meanwhile` did) transfer `cents` from `from` to `to` and commit.
   */
  const transferBegunFirst = async (from: string, to: string, cents: number, meanwhile: () => Promise<void>) => {
    const runner = t.app.get(DataSource).createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query('SELECT now()');
      await new Promise((resolve) => setTimeout(resolve, 20));
      await meanwhile();
      await t.app.get(LedgerRepository).post(runner.manager, {
        kind: 'transfer',
        sellerId: seller,
        actingAccountId: from,
        description: 'begun first, applied last',
        externalReference: null,
        lines: [
          { accountId: from, type: 'transfer_out', amount: -cents, counterparty: { virtual_account: to } },
          { accountId: to, type: 'transfer_in', amount: cents, counterparty: { virtual_account: from } },
        ],
      });
      await runner.commitTransaction();
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  };
  const confirm = (depositId: string, token = superuser.access) =>
    t.http.post(`/sandbox/deposits/${depositId}/confirm`, undefined, { token });
  /** Money in as a client would: a pix deposit, paid (sandbox confirm). */
  const fund = async (id: string, amount: string) => {
    const created = await act(id, 'deposit', { amount });
    const confirmed = await confirm(created.body.id);
    if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status} ${confirmed.text}`);
    return confirmed.body;
  };
  /** The posting once its payout left `processing` (the payout job runs within seconds). */
  const settled = async (accountId: string, postingId: string) => {
    for (let attempt = 0; attempt < 300; attempt++) {
      const posting = (await statement(accountId)).find((p) => p.id === postingId);
      if (posting && posting.status !== 'processing') return posting;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`posting ${postingId} still processing after 30 s`);
  };
  const outbox = async (type: string, id: string) =>
    (await t.db.query(`SELECT seller_id, data FROM outbox_events WHERE type = $1 AND data->>'id' = $2`, [type, id]))
      .rows;

  it('opens a virtual account with the same id when a sub-account is created', async () => {
    const created = await t.http.post(
      `/sellers/${seller}/subaccounts`,
      { name: 'Filial' },
      { token: superuser.access },
    );
    expect(created.body.virtual_account).toBe(created.body.id);
    const account = await t.http.get(`${base()}/${created.body.id}/`, { token: superuser.access });
    expect(account.status).toBe(200);
    expect(account.body).toEqual({
      id: created.body.id,
      seller,
      name: 'Filial',
      balance: '0.00',
      currency: 'BRL',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const list = await t.http.get(base(), { token: superuser.access });
    expect(list.body.results.map((a: { id: string }) => a.id)).toContain(created.body.id);
  });

  describe('deposits', () => {
    it('keeps a pix deposit pending, with no posting, until the payment is confirmed; then posts it once', async () => {
      const a = await subaccount();
      const created = await act(a, 'deposit', { amount: '100.00', description: 'Top-up' }, {}, w.permittedUser.access);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        virtual_account: a,
        seller,
        status: 'pending',
        amount: '100.00',
        method: 'pix',
        description: 'Top-up',
        reason: null,
        external_reference: null,
        pix: { qr_code: expect.stringMatching(/^000201.*BR\.GOV\.BCB\.PIX/), expires_at: expect.any(String) },
        boleto: null,
        posting: null,
        expires_at: created.body.pix.expires_at,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        completed_at: null,
        expired_at: null,
      });
      expect(new Date(created.body.expires_at).getTime()).toBeGreaterThan(Date.now());
      expect(await balance(a)).toBe('0.00');
      expect(await statement(a)).toEqual([]);
      expect(await outbox('virtual_account.deposit', created.body.id)).toEqual([]);

      const detail = await t.http.get(`${base()}/${a}/deposits/${created.body.id}/`, { token: superuser.access });
      expect(detail.body).toEqual(created.body);

      const confirmed = await confirm(created.body.id, w.permittedUser.access);
      expect(confirmed.status).toBe(200);
      expect(confirmed.body).toEqual({
        ...created.body,
        status: 'completed',
        posting: expect.any(String),
        updated_at: expect.any(String),
        completed_at: expect.any(String),
      });
      expect(await balance(a)).toBe('100.00');
      expect(await statement(a)).toEqual([
        {
          id: confirmed.body.posting,
          virtual_account: a,
          type: 'deposit',
          amount: '100.00',
          balance_after: '100.00',
          description: 'Top-up',
          counterparty: { deposit: created.body.id, method: 'pix' },
          journal_entry: expect.any(String),
          status: 'completed',
          failure_reason: null,
          created_at: expect.any(String),
        },
      ]);
      // The event carries the deposit exactly as the API shows it.
      expect(await outbox('virtual_account.deposit', created.body.id)).toEqual([
        { seller_id: seller, data: confirmed.body },
      ]);

      const again = await confirm(created.body.id);
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_state');
      expect(await balance(a)).toBe('100.00');
      const list = await t.http.get(`${base()}/${a}/deposits/`, { token: superuser.access });
      expect(list.body).toEqual({ results: [confirmed.body], next_cursor: null });
    });

    it('issues a boleto for a boleto deposit, and lists deposits newest first with a status filter', async () => {
      const a = await subaccount();
      const before = Date.now();
      const boleto = await act(a, 'deposit', { amount: '250.00', method: 'boleto' });
      const after = Date.now();
      expect(boleto.status).toBe(201);
      expect(boleto.body).toMatchObject({
        status: 'pending',
        method: 'boleto',
        pix: null,
        boleto: {
          digitable_line: expect.stringMatching(/^\d{47}$/),
          due_date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
        },
      });
      // Due in 3 days in Brasília; payable (pending) until that day ends there.
      const due = boleto.body.boleto.due_date;
      expect([addDays(brasiliaDate(before), 3), addDays(brasiliaDate(after), 3)]).toContain(due);
      expect(boleto.body.expires_at).toBe(brasiliaDayEnd(due).toISOString());
      const pix = await fund(a, '10.00');
      const all = await t.http.get(`${base()}/${a}/deposits?limit=1`, { token: superuser.access });
      expect(all.body.results.map((d: { id: string }) => d.id)).toEqual([pix.id]);
      const next = await t.http.get(`${base()}/${a}/deposits?limit=1&cursor=${all.body.next_cursor}`, {
        token: superuser.access,
      });
      expect(next.body.results.map((d: { id: string }) => d.id)).toEqual([boleto.body.id]);
      const pending = await t.http.get(`${base()}/${a}/deposits?status=pending`, { token: superuser.access });
      expect(pending.body.results.map((d: { id: string }) => d.id)).toEqual([boleto.body.id]);
      expect((await confirm(boleto.body.id)).body.status).toBe('completed');
      expect(await balance(a)).toBe('260.00');
    });

    it('expires unpaid deposits, which can no longer be confirmed', async () => {
      const a = await subaccount();
      const created = await act(a, 'deposit', { amount: '40.00' });
      const deposits = t.app.get(DepositsService);
      const expiresAt = new Date(created.body.expires_at);
      // Not yet due: nothing expires, and a confirmation after the deadline is refused even before the job ran.
      await deposits.expireDue(new Date(expiresAt.getTime() - 1));
      expect(
        (await t.http.get(`${base()}/${a}/deposits/${created.body.id}`, { token: superuser.access })).body.status,
      ).toBe('pending');
      await expect(deposits.confirm(created.body.id, expiresAt)).rejects.toMatchObject({ code: 'invalid_state' });

      expect(await deposits.expireDue(new Date(expiresAt.getTime() + 1))).toBeGreaterThanOrEqual(1);
      const detail = await t.http.get(`${base()}/${a}/deposits/${created.body.id}`, { token: superuser.access });
      expect(detail.body).toMatchObject({ status: 'expired', posting: null, expired_at: expect.any(String) });
      expect(await outbox('virtual_account.deposit.expired', created.body.id)).toEqual([
        { seller_id: seller, data: detail.body },
      ]);
      const late = await confirm(created.body.id);
      expect(late.status).toBe(409);
      expect(late.body.code).toBe('invalid_state');
      expect(await balance(a)).toBe('0.00');
    });

    it('lets only a superuser deposit by hand, with a reason, posted at once and written to the audit log', async () => {
      const a = await subaccount();
      const refused = await act(
        a,
        'deposit',
        { amount: '500.00', method: 'manual', reason: 'Wire' },
        {},
        w.permittedUser.access,
      );
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('superuser_required');
      // A refusal for the caller's rights does not use up the key: made superuser, the same key acts.
      const b = await subaccount();
      const clerk = await createUser(t);
      await grant(t, superuser, seller, clerk, ['virtualaccounts.operate', 'virtualaccounts.view']);
      const byHand = { amount: '1.00', method: 'manual', reason: 'Wire 7' };
      const before = await act(b, 'deposit', byHand, { 'idempotency-key': 'by-hand' }, clerk.access);
      expect(before.body.code).toBe('superuser_required');
      await t.http.patch(`/users/${clerk.id}/`, { is_superuser: true }, { token: superuser.access });
      const after = await act(b, 'deposit', byHand, { 'idempotency-key': 'by-hand' }, clerk.access);
      expect(after.status).toBe(201);
      expect(after.headers.get('idempotent-replayed')).toBeNull();
      expect(await balance(b)).toBe('1.00');
      const noReason = await act(a, 'deposit', { amount: '500.00', method: 'manual' });
      expect(noReason.status).toBe(400);
      expect(Object.keys(noReason.body.errors)).toEqual(['reason']);
      expect(await balance(a)).toBe('0.00');
      expect((await t.db.query(`SELECT count(*)::int AS n FROM deposits WHERE account_id = $1`, [a])).rows[0].n).toBe(
        0,
      );

      const manual = await act(
        a,
        'deposit',
        { amount: '500.00', method: 'manual', reason: 'Wire 123 reconciled', external_reference: 'wire-123' },
        { 'x-request-id': 'manual-deposit-1' },
      );
      expect(manual.status).toBe(201);
      expect(manual.body).toMatchObject({
        status: 'completed',
        method: 'manual',
        reason: 'Wire 123 reconciled',
        external_reference: 'wire-123',
        pix: null,
        boleto: null,
        expires_at: null,
        posting: expect.any(String),
      });
      // Created and completed in one move: at one instant, never completed before it was created.
      expect(manual.body.completed_at).toEqual(expect.any(String));
      expect(manual.body.completed_at).toBe(manual.body.created_at);
      expect(await balance(a)).toBe('500.00');
      const [posting] = await statement(a);
      expect(posting).toMatchObject({
        id: manual.body.posting,
        type: 'deposit',
        counterparty: { deposit: manual.body.id, method: 'manual', external_reference: 'wire-123' },
      });
      const audit = await t.db.query(
        `SELECT actor_kind, actor_id, action, seller_id, target_type, target_id, changes, request_id, ip FROM audit_log WHERE target_id = $1`,
        [manual.body.id],
      );
      expect(audit.rows).toEqual([
        {
          actor_kind: 'user',
          actor_id: superuser.id,
          action: 'virtual_account.manual_deposit',
          seller_id: seller,
          target_type: 'deposit',
          target_id: manual.body.id,
          changes: {
            virtual_account: a,
            amount: '500.00',
            reason: 'Wire 123 reconciled',
            external_reference: 'wire-123',
          },
          request_id: 'manual-deposit-1',
          ip: '127.0.0.1',
        },
      ]);
    });

    it('validates deposits with the field path', async () => {
      const a = await subaccount();
      const cases: Array<[unknown, string]> = [
        [{ amount: '0.00' }, 'amount'],
        [{ amount: 5 }, 'amount'],
        [{ amount: '-1.00' }, 'amount'],
        [{ amount: '10000000.01' }, 'amount'],
        [{ amount: '1.00', method: 'card' }, 'method'],
        [{ amount: '1.00', method: 'pix', reason: 'why' }, 'reason'],
        [{ amount: '1.00', reason: 'why' }, 'reason'],
        [{ amount: '1.00', method: 'manual', reason: '' }, 'reason'],
        [{ amount: '1.00', method: 'manual', reason: 7 }, 'reason'],
      ];
      for (const [body, field] of cases) {
        const res = await act(a, 'deposit', body);
        expect({ body, status: res.status, fields: Object.keys(res.body.errors ?? {}) }).toEqual({
          body,
          status: 400,
          fields: [field],
        });
      }
      expect((await t.db.query(`SELECT count(*)::int AS n FROM deposits WHERE account_id = $1`, [a])).rows[0].n).toBe(
        0,
      );
      const unknown = await t.http.get(`${base()}/${a}/deposits/7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11`, {
        token: superuser.access,
      });
      expect([unknown.status, unknown.body.code]).toEqual([404, 'deposit_not_found']);
      expect((await confirm('7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11')).body.code).toBe('deposit_not_found');
      expect((await confirm('not-a-uuid')).status).toBe(404);
    });

    it('replays a deposit sent again with the same Idempotency-Key', async () => {
      const a = await subaccount();
      const first = await act(a, 'deposit', { amount: '7.00' }, { 'idempotency-key': 'deposit-once' });
      const again = await act(a, 'deposit', { amount: '7.00' }, { 'idempotency-key': 'deposit-once' });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect((await t.db.query(`SELECT count(*)::int AS n FROM deposits WHERE account_id = $1`, [a])).rows[0].n).toBe(
        1,
      );
    });
  });

  describe('payouts and transfers', () => {
    it('pays and transfers out as payouts: processing at once (balance reserved), then completed', async () => {
      const a = await subaccount();
      const b = await subaccount();
      await fund(a, '100.00');
      const pay = await act(a, 'pay', {
        amount: '30.50',
        description: 'Bill',
        payee: { name: 'Energia', document: '11222333000181' },
        barcode: '8'.repeat(44),
      });
      expect(pay.status).toBe(201);
      expect(pay.body).toEqual({
        id: expect.any(String),
        virtual_account: a,
        type: 'payment',
        amount: '30.50',
        balance_after: '69.50',
        description: 'Bill',
        counterparty: { payee: { name: 'Energia', document: '11222333000181' }, barcode: '8'.repeat(44) },
        journal_entry: expect.any(String),
        status: 'processing',
        failure_reason: null,
        created_at: expect.any(String),
      });
      expect(await balance(a)).toBe('69.50');
      expect(await outbox('virtual_account.payment', pay.body.id)).toEqual([{ seller_id: seller, data: pay.body }]);

      const internal = await act(a, 'transfer', { amount: '19.50', destination: { virtual_account: b } });
      expect(internal.body).toMatchObject({
        type: 'transfer_out',
        amount: '19.50',
        balance_after: '50.00',
        counterparty: { virtual_account: b },
        status: 'completed',
      });
      const pix = await act(a, 'transfer', { amount: '10.00', destination: { pix_key: 'ana@example.com' } });
      expect(pix.body).toMatchObject({
        type: 'transfer_out',
        balance_after: '40.00',
        counterparty: { pix_key: 'ana@example.com' },
        status: 'processing',
      });
      const bank = await act(b, 'transfer', {
        amount: '9.50',
        destination: { bank_account: { bank: '341', branch: '0001', account: '12345-6', document: '52998224725' } },
      });
      expect(bank.body).toMatchObject({ type: 'transfer_out', balance_after: '10.00', status: 'processing' });

      for (const [account, posting] of [
        [a, pay.body],
        [a, pix.body],
        [b, bank.body],
      ]) {
        expect(await settled(account, posting.id)).toEqual({ ...posting, status: 'completed' });
      }
      expect(await balance(a)).toBe('40.00');
      expect(await balance(b)).toBe('10.00');
      const payouts = await t.db.query(`SELECT status, provider_reference FROM payouts WHERE account_id = ANY($1)`, [
        [a, b],
      ]);
      expect(payouts.rows).toEqual(
        Array(3).fill({ status: 'completed', provider_reference: expect.stringMatching(/^sbx_payout_/) }),
      );

      expect((await statement(a)).map((p) => [p.type, p.amount, p.balance_after, p.status])).toEqual([
        ['transfer_out', '10.00', '40.00', 'completed'],
        ['transfer_out', '19.50', '50.00', 'completed'],
        ['payment', '30.50', '69.50', 'completed'],
        ['deposit', '100.00', '100.00', 'completed'],
      ]);
      const incoming = await t.http.get(`${base()}/${b}/postings?type=transfer_in`, { token: superuser.access });
      expect(incoming.body.results).toEqual([
        expect.objectContaining({
          type: 'transfer_in',
          amount: '19.50',
          balance_after: '19.50',
          counterparty: { virtual_account: a },
          journal_entry: internal.body.journal_entry,
        }),
      ]);
      // An internal transfer tells each side's seller of its own posting, as the API shows it.
      const [inLine] = incoming.body.results;
      expect(await outbox('virtual_account.transfer', inLine.id)).toEqual([{ seller_id: seller, data: inLine }]);
      expect(await outbox('virtual_account.transfer', internal.body.id)).toEqual([
        { seller_id: seller, data: internal.body },
      ]);
      const oldest = await t.http.get(`${base()}/${a}/postings?ordering=created_at&limit=1`, {
        token: superuser.access,
      });
      expect(oldest.body.results[0].type).toBe('deposit');
      const next = await t.http.get(
        `${base()}/${a}/postings?ordering=created_at&limit=1&cursor=${oldest.body.next_cursor}`,
        { token: superuser.access },
      );
      expect(next.body.results[0].type).toBe('payment');
    });

    it('shows a posting as soon as it commits, while a transaction begun before it still runs, and a poller misses nothing', async () => {
      const a = await subaccount();
      const b = await subaccount();
      await fund(a, '10.00');
      let movedAt: string | undefined;
      await transferBegunFirst(a, b, 200, async () => {
        const moved = await act(a, 'transfer', { amount: '1.00', destination: { virtual_account: b } });
        expect(moved.status).toBe(201);
        movedAt = moved.body.created_at;
        // Read your writes: the transfer is on both statements at once.
        expect((await statement(a)).map((p) => p.type)).toEqual(['transfer_out', 'deposit']);
        expect((await statement(b)).map((p) => p.id)).toHaveLength(1);
      });
      // What the older transaction posted then is stamped after the transfer (it took the
      // account's lock after it), so polling from the transfer on finds it.
      const polled = await t.http.get(
        `${base()}/${a}/postings?ordering=created_at&created_after=${encodeURIComponent(movedAt!)}`,
        { token: superuser.access },
      );
      expect(polled.body.results.map((p: { balance_after: string }) => p.balance_after)).toEqual(['9.00', '7.00']);
      expect(await balance(a)).toBe('7.00');
    });

    it('gives the money back with a reversal posting when a payout fails (sandbox triggers)', async () => {
      const a = await subaccount();
      await fund(a, '50.00');
      const pix = await act(a, 'transfer', { amount: '20.00', destination: { pix_key: 'fail@sandbox.test' } });
      const bank = await act(a, 'transfer', {
        amount: '5.00',
        destination: { bank_account: { bank: '001', branch: '1', account: '0000000', document: '52998224725' } },
      });
      expect([pix.body.status, bank.body.status, bank.body.balance_after]).toEqual([
        'processing',
        'processing',
        '25.00',
      ]);

      const failedPix = await settled(a, pix.body.id);
      expect(failedPix).toEqual({ ...pix.body, status: 'failed', failure_reason: 'pix_key_not_found' });
      const failedBank = await settled(a, bank.body.id);
      expect(failedBank).toEqual({ ...bank.body, status: 'failed', failure_reason: 'bank_account_closed' });
      expect(await balance(a)).toBe('50.00');

      const reversals = (await statement(a)).filter((p) => p.type === 'reversal');
      expect(reversals).toHaveLength(2);
      expect(reversals).toContainEqual(
        expect.objectContaining({
          amount: '20.00',
          status: 'completed',
          counterparty: { reverses: pix.body.id, reason: 'pix_key_not_found' },
        }),
      );
      expect(reversals.map((r) => r.journal_entry)).not.toContain(pix.body.journal_entry);
      expect(await outbox('virtual_account.payout.failed', pix.body.id)).toEqual([
        { seller_id: seller, data: failedPix },
      ]);
      // Each reversal is one balanced entry on the same outside-world account as its payout.
      const lines = await t.db.query(
        `SELECT sum(amount)::int AS total, count(*)::int AS n FROM ledger_lines WHERE entry_id = $1`,
        [reversals[0].journal_entry],
      );
      expect(lines.rows).toEqual([{ total: 0, n: 2 }]);
    });

    it('refuses to go below zero with 400 insufficient_funds and writes nothing', async () => {
      const a = await subaccount();
      const b = await subaccount();
      await fund(a, '10.00');
      const count = async (table: string) => (await t.db.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
      const before = [await count('ledger_lines'), await count('payouts'), await count('pgboss.job')];
      for (const [action, body] of [
        ['pay', { amount: '10.01', payee: { name: 'X' }, barcode: '1'.repeat(47) }],
        ['transfer', { amount: '10.01', destination: { virtual_account: b } }],
        ['transfer', { amount: '10.01', destination: { pix_key: 'x@example.com' } }],
      ] as const) {
        const res = await act(a, action, body);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('insufficient_funds');
      }
      expect([await count('ledger_lines'), await count('payouts'), await count('pgboss.job')]).toEqual(before);
      expect(await balance(a)).toBe('10.00');
      expect(await balance(b)).toBe('0.00');
      expect(
        (await act(a, 'pay', { amount: '10.00', payee: { name: 'X' }, barcode: '1'.repeat(47) })).body.balance_after,
      ).toBe('0.00');
    });

    it('validates amounts, destinations and payees', async () => {
      const a = await subaccount();
      await fund(a, '50.00');
      const cases: Array<[string, unknown, string]> = [
        ['pay', { amount: '1.00', barcode: '123', payee: { name: 'X' } }, 'barcode'],
        ['pay', { amount: '1.00', barcode: '1'.repeat(44) }, 'payee'],
        // An array is not a payee (it passed once, and the money went out with no payee name).
        ['pay', { amount: '1.00', barcode: '1'.repeat(44), payee: [] }, 'payee'],
        ['pay', { amount: '1.00', barcode: '1'.repeat(44), payee: [{ name: 'X' }] }, 'payee'],
        ['transfer', { amount: '1.00', destination: [] }, 'destination'],
        ['transfer', { amount: '1.00', destination: { bank_account: [] } }, 'destination.bank_account'],
        ['pay', { amount: '1.00', barcode: '1'.repeat(44), payee: { name: 'X', document: '123' } }, 'payee.document'],
        ['pay', { amount: '1.001', barcode: '1'.repeat(44), payee: { name: 'X' } }, 'amount'],
        ['transfer', { amount: '1.00' }, 'destination'],
        ['transfer', { amount: '1.00', destination: {} }, 'destination'],
        [
          'transfer',
          { amount: '1.00', destination: { pix_key: 'ana@example.com', virtual_account: a } },
          'destination',
        ],
        // Not a PIX key of any kind: a bad CPF, a phone without +55, a name.
        ['transfer', { amount: '1.00', destination: { pix_key: '52998224724' } }, 'destination.pix_key'],
        ['transfer', { amount: '1.00', destination: { pix_key: '11987654321' } }, 'destination.pix_key'],
        ['transfer', { amount: '1.00', destination: { pix_key: 'Ana Souza' } }, 'destination.pix_key'],
        [
          'transfer',
          {
            amount: '1.00',
            destination: { bank_account: { bank: '1', branch: '0001', account: '1', document: '52998224725' } },
          },
          'destination.bank_account.bank',
        ],
        [
          'transfer',
          {
            amount: '1.00',
            destination: { bank_account: { bank: '001', branch: '0001', account: '1', document: '123' } },
          },
          'destination.bank_account.document',
        ],
      ];
      for (const [action, body, field] of cases) {
        const res = await act(a, action, body);
        expect({ action, body, status: res.status, fields: Object.keys(res.body.errors ?? {}) }).toEqual({
          action,
          body,
          status: 400,
          fields: expect.arrayContaining([field]),
        });
      }
      for (const destination of [
        { pix_key: null },
        { virtual_account: null },
        { bank_account: null },
        { pix_key: null, virtual_account: a },
      ]) {
        const res = await act(a, 'transfer', { amount: '1.00', destination });
        expect({ destination, status: res.status }).toEqual({ destination, status: 400 });
      }
      const self = await act(a, 'transfer', { amount: '1.00', destination: { virtual_account: a } });
      expect(self.body.code).toBe('same_account');
      const nowhere = await act(a, 'transfer', {
        amount: '1.00',
        destination: { virtual_account: '7d7e1b6c-55b1-4d6c-9a1a-0e4bfe5a2a11' },
      });
      expect(nowhere.body.code).toBe('destination_not_found');
      expect(await balance(a)).toBe('50.00');
    });

    it('takes upper-case ids in the path and the destination', async () => {
      const a = await subaccount();
      const b = await subaccount();
      const deposit = await act(a.toUpperCase(), 'deposit', { amount: '9.00' });
      expect(deposit.status).toBe(201);
      expect(deposit.body.virtual_account).toBe(a);
      await confirm(deposit.body.id.toUpperCase());
      const moved = await act(a.toUpperCase(), 'transfer', {
        amount: '4.00',
        destination: { virtual_account: b.toUpperCase() },
      });
      expect(moved.status).toBe(201);
      expect(moved.body.balance_after).toBe('5.00');
      expect(await balance(b)).toBe('4.00');
    });

    it("writes each side's event as the API shows its posting, for amounts under one real and in the millions", async () => {
      const a = await subaccount();
      const b = await subaccount();
      await fund(a, '1234567.09');
      for (const amount of ['0.05', '0.50', '1000000.00', '10.99']) {
        const moved = await act(a, 'transfer', { amount, destination: { virtual_account: b }, description: 'Split' });
        expect(moved.status).toBe(201);
        const [incoming] = await statement(b);
        expect(await outbox('virtual_account.transfer', moved.body.id)).toEqual([
          { seller_id: seller, data: moved.body },
        ]);
        expect(await outbox('virtual_account.transfer', incoming.id)).toEqual([{ seller_id: seller, data: incoming }]);
        expect(incoming.amount).toBe(amount);
      }
      expect(await balance(a)).toBe('234555.55');
      expect(await balance(b)).toBe('1000011.54');
    });

    it('replays a transfer between virtual accounts sent again with the same Idempotency-Key: moved once', async () => {
      const a = await subaccount();
      const b = await subaccount();
      await fund(a, '10.00');
      const body = { amount: '3.00', destination: { virtual_account: b } };
      const first = await act(a, 'transfer', body, { 'idempotency-key': 'inside-once' });
      expect(first.status).toBe(201);
      const again = await act(a, 'transfer', body, { 'idempotency-key': 'inside-once' });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect([await balance(a), await balance(b)]).toEqual(['7.00', '3.00']);
      const entries = await t.db.query(`SELECT count(*)::int AS n FROM journal_entries WHERE id = $1`, [
        first.body.journal_entry,
      ]);
      expect(entries.rows[0].n).toBe(1);
      expect(await outbox('virtual_account.transfer', first.body.id)).toHaveLength(1);
      expect((await statement(b)).filter((p) => p.type === 'transfer_in')).toHaveLength(1);
    });

    it('replays a transfer sent again with the same Idempotency-Key', async () => {
      const a = await subaccount();
      await fund(a, '10.00');
      const body = { amount: '3.00', destination: { pix_key: 'ana@example.com' } };
      const first = await act(a, 'transfer', body, { 'idempotency-key': 'transfer-once' });
      const again = await act(a, 'transfer', body, { 'idempotency-key': 'transfer-once' });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(await balance(a)).toBe('7.00');
    });
  });

  describe('books guarded by the database', () => {
    it('writes one balanced journal entry per action, with system accounts for the outside world', async () => {
      const a = await subaccount();
      await fund(a, '5.00');
      const [posting] = await statement(a);
      const { rows } = await t.db.query(
        `SELECT l.amount::int AS amount, acc.kind FROM ledger_lines l JOIN ledger_accounts acc ON acc.id = l.account_id WHERE l.entry_id = $1 ORDER BY l.amount`,
        [posting.journal_entry],
      );
      expect(rows).toEqual([
        { amount: -500, kind: 'system' },
        { amount: 500, kind: 'virtual' },
      ]);
    });

    it('stamps a posting when it is applied, so that a window of the statement is an unbroken balance chain', async () => {
      const a = await subaccount();
      const b = await subaccount();
      await fund(a, '50.00');
      // A transfer whose database transaction began first, and another, begun later, applied to
      // the account first.
      await transferBegunFirst(a, b, 500, async () => {
        expect((await act(a, 'transfer', { amount: '10.00', destination: { virtual_account: b } })).status).toBe(201);
      });
      const { rows } = await t.db.query(
        `SELECT account_line::int AS line, balance_after::int AS balance, created_at FROM ledger_lines
          WHERE account_id = $1 ORDER BY account_line`,
        [a],
      );
      expect(rows.map((r: { balance: number }) => r.balance)).toEqual([5000, 4000, 3500]);
      const stamps = rows.map((r: { created_at: Date }) => r.created_at.getTime());
      expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
      // The statement's window from the second posting on starts where the chain does.
      const second = (await statement(a)).find((p) => p.balance_after === '40.00')!;
      const window = await t.http.get(
        `${base()}/${a}/postings?ordering=created_at&created_after=${encodeURIComponent(second.created_at)}`,
        { token: superuser.access },
      );
      expect(window.body.results.map((p: { balance_after: string }) => p.balance_after)).toEqual(['40.00', '35.00']);
    });

    it('refuses to hold more than the balance limit', async () => {
      const a = await subaccount();
      await t.db.query(`UPDATE ledger_accounts SET balance = 99999999999999, last_line = last_line + 1 WHERE id = $1`, [
        a,
      ]);
      const manual = { method: 'manual', reason: 'Limit test' };
      const res = await act(a, 'deposit', { amount: '0.02', ...manual });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('balance_limit_exceeded');
      expect((await t.db.query(`SELECT count(*)::int AS n FROM deposits WHERE account_id = $1`, [a])).rows[0].n).toBe(
        0,
      );
      const pending = await act(a, 'deposit', { amount: '0.02' });
      expect((await confirm(pending.body.id)).body.code).toBe('balance_limit_exceeded');
      expect((await act(a, 'deposit', { amount: '0.01', ...manual })).status).toBe(201);
    });

    it('never updates or deletes a posting, nor deletes an account, even from SQL', async () => {
      const a = await subaccount();
      await fund(a, '1.00');
      await expect(t.db.query(`UPDATE ledger_lines SET amount = 1000 WHERE account_id = $1`, [a])).rejects.toThrow(
        /append-only/,
      );
      await expect(t.db.query(`DELETE FROM journal_entries`)).rejects.toThrow(/append-only/);
      await expect(t.db.query(`DELETE FROM ledger_accounts WHERE id = $1`, [a])).rejects.toThrow(/append-only/);
      await expect(
        t.db.query(`UPDATE ledger_accounts SET balance = -1, last_line = last_line + 1 WHERE id = $1`, [a]),
      ).rejects.toThrow(/no_overdraft/);
      await expect(
        t.db.query(`UPDATE ledger_accounts SET seller_id = $2 WHERE id = $1`, [a, w.sellerB]),
      ).rejects.toThrow(/only its balance moves/);
      await expect(t.db.query(`TRUNCATE ledger_lines CASCADE`)).rejects.toThrow(/append-only/);
      await expect(
        t.db.query(
          `WITH e AS (INSERT INTO journal_entries (kind, seller_id) VALUES ('transfer', $2) RETURNING id)
                    INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after) SELECT e.id, $1, 'transfer_in', 5, 999, 5 FROM e`,
          [a, seller],
        ),
      ).rejects.toThrow(/does not balance/);
    });

    it('moves deposits and payouts only forward, posts a deposit once and reverses a payout at most once', async () => {
      const a = await subaccount();
      const deposit = await fund(a, '20.00');
      const pending = (await act(a, 'deposit', { amount: '3.00' })).body;
      const failed = (await act(a, 'transfer', { amount: '2.00', destination: { pix_key: 'fail@sandbox.test' } })).body;
      await settled(a, failed.id);
      const sql = (text: string, params: unknown[] = []) => t.db.query(text, params);

      await expect(
        sql(`UPDATE deposits SET status = 'pending', entry_id = NULL, completed_at = NULL WHERE id = $1`, [deposit.id]),
      ).rejects.toThrow(/not a forward move/);
      await expect(
        sql(`UPDATE deposits SET status = 'expired', expired_at = now() WHERE id = $1`, [deposit.id]),
      ).rejects.toThrow(/not a forward move|check constraint/);
      await expect(sql(`UPDATE deposits SET amount = 1 WHERE id = $1`, [pending.id])).rejects.toThrow(
        /only its status moves/,
      );
      await expect(sql(`DELETE FROM deposits WHERE id = $1`, [pending.id])).rejects.toThrow(/append-only/);
      await expect(sql(`DELETE FROM payouts`)).rejects.toThrow(/append-only/);
      await expect(sql(`TRUNCATE deposits, payouts`)).rejects.toThrow(/append-only/);
      // Completing a pending deposit with another deposit's entry: one completion per entry.
      await expect(
        sql(
          `UPDATE deposits SET status = 'completed', completed_at = now(), entry_id = (SELECT entry_id FROM deposits WHERE id = $2) WHERE id = $1`,
          [pending.id, deposit.id],
        ),
      ).rejects.toThrow(/duplicate key/);
      // Completing it without posting it.
      await expect(
        sql(
          `UPDATE deposits SET status = 'completed', completed_at = now(), entry_id = (SELECT entry_id FROM payouts WHERE entry_id IS NOT NULL LIMIT 1) WHERE id = $1`,
          [pending.id],
        ),
      ).rejects.toThrow(/completed without its deposit entry/);
      // Money from nowhere: a deposit entry no deposit points at.
      const source = (await sql(`SELECT id FROM ledger_accounts WHERE code = 'external:deposits'`)).rows[0].id;
      await expect(
        sql(
          `SELECT * FROM ledger_post('deposit', $1, $2::uuid, NULL, NULL, jsonb_build_array(
             jsonb_build_object('account_id', $2::uuid, 'type', 'deposit', 'amount', 100000),
             jsonb_build_object('account_id', $3::uuid, 'type', 'external', 'amount', -100000)))`,
          [seller, a, source],
        ),
      ).rejects.toThrow(/exactly one completed deposit/);
      // Money out without a payout.
      const sink = (await sql(`SELECT id FROM ledger_accounts WHERE code = 'external:transfers'`)).rows[0].id;
      await expect(
        sql(
          `SELECT * FROM ledger_post('transfer', $1, $2::uuid, NULL, NULL, jsonb_build_array(
             jsonb_build_object('account_id', $2::uuid, 'type', 'transfer_out', 'amount', -100),
             jsonb_build_object('account_id', $3::uuid, 'type', 'external', 'amount', 100)))`,
          [seller, a, sink],
        ),
      ).rejects.toThrow(/is a payout/);
      // A second reversal of the failed payout.
      await expect(
        sql(
          `SELECT * FROM ledger_post('reversal', $1, $2::uuid, NULL, NULL, jsonb_build_array(
             jsonb_build_object('account_id', $2::uuid, 'type', 'reversal', 'amount', 200),
             jsonb_build_object('account_id', $3::uuid, 'type', 'external', 'amount', -200)))`,
          [seller, a, sink],
        ),
      ).rejects.toThrow(/exactly one failed payout/);
      await expect(
        sql(`UPDATE payouts SET status = 'completed', completed_at = now() WHERE entry_id = $1`, [
          failed.journal_entry,
        ]),
      ).rejects.toThrow(/not a forward move/);
      expect(await balance(a)).toBe('20.00');
    });
  });

  it('answers DELETE with 405 always, whatever the credential', async () => {
    const a = await subaccount();
    for (const token of [
      undefined,
      'garbage',
      w.callers.apiKey,
      w.callers.noAccess,
      w.callers.permitted,
      superuser.access,
    ]) {
      const res = await t.http.delete(`${base()}/${a}/`, { token });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
      expect(res.body.code).toBe('method_not_allowed');
    }
    expect(await balance(a)).toBe('0.00');
  });

  describe('auth matrix', () => {
    const reads = (ok: number) => sellerRoute(ok);
    const writes = reads;
    const funded = async () => {
      const id = await subaccount();
      await act(id, 'deposit', { amount: '5.00', method: 'manual', reason: 'Matrix' });
      return id;
    };
    const routes: Record<string, RouteCase> = {
      'GET virtualaccounts': { method: 'GET', request: () => ({ path: base() }), expect: reads(200) },
      'GET virtualaccounts/{id}': {
        method: 'GET',
        request: async () => ({ path: `${base()}/${await subaccount()}` }),
        expect: reads(200),
      },
      'GET virtualaccounts/{id}/postings': {
        method: 'GET',
        request: async () => ({ path: `${base()}/${await subaccount()}/postings` }),
        expect: reads(200),
      },
      'GET virtualaccounts/{id}/deposits': {
        method: 'GET',
        request: async () => ({ path: `${base()}/${await subaccount()}/deposits` }),
        expect: reads(200),
      },
      'GET virtualaccounts/{id}/deposits/{deposit_id}': {
        method: 'GET',
        request: async () => {
          const id = await subaccount();
          const deposit = await act(id, 'deposit', { amount: '1.00' });
          return { path: `${base()}/${id}/deposits/${deposit.body.id}` };
        },
        expect: reads(200),
      },
      'POST virtualaccounts/{id}/deposit (pix)': {
        method: 'POST',
        request: async () => ({ path: `${base()}/${await subaccount()}/deposit`, body: { amount: '1.00' } }),
        expect: writes(201),
      },
      'POST virtualaccounts/{id}/deposit (manual: superusers only)': {
        method: 'POST',
        request: async () => ({
          path: `${base()}/${await subaccount()}/deposit`,
          body: { amount: '1.00', method: 'manual', reason: 'Matrix' },
        }),
        expect: { ...writes(201), permitted: 403 },
      },
      'POST virtualaccounts/{id}/pay': {
        method: 'POST',
        request: async () => ({
          path: `${base()}/${await funded()}/pay`,
          body: { amount: '1.00', payee: { name: 'X' }, barcode: '1'.repeat(44) },
        }),
        expect: writes(201),
      },
      'POST virtualaccounts/{id}/transfer': {
        method: 'POST',
        request: async () => ({
          path: `${base()}/${await funded()}/transfer`,
          body: { amount: '1.00', destination: { pix_key: 'x@example.com' } },
        }),
        expect: writes(201),
      },
      'POST sandbox/deposits/{id}/confirm': {
        method: 'POST',
        request: async () => {
          const deposit = await act(await subaccount(), 'deposit', { amount: '1.00' });
          return { path: `/sandbox/deposits/${deposit.body.id}/confirm` };
        },
        expect: { ...reads(200), apiKey: 403, otherSellerKey: 403 },
      },
    };
    itAnswersEveryCaller(routes, () => ({ t, callers: w.callers }));

    it("answers 404 for another seller's virtual account or deposit through this seller's path", async () => {
      const foreign = await subaccount(w.sellerB);
      expect((await t.http.get(`${base()}/${foreign}`, { token: superuser.access })).status).toBe(404);
      expect((await act(foreign, 'deposit', { amount: '1.00' })).status).toBe(404);
      expect((await t.http.get(`${base()}/${foreign}/postings`, { token: w.callers.permitted })).status).toBe(404);
      expect((await t.http.get(`${base()}/${foreign}/deposits`, { token: w.callers.permitted })).status).toBe(404);
      const theirs = await t.http.post(
        `${base(w.sellerB)}/${foreign}/deposit`,
        { amount: '1.00' },
        { token: superuser.access },
      );
      const mine = await subaccount();
      const path = `${base()}/${mine}/deposits/${theirs.body.id}`;
      expect((await t.http.get(path, { token: w.callers.permitted })).body.code).toBe('deposit_not_found');
      expect((await confirm(theirs.body.id, w.callers.permitted)).body.code).toBe('deposit_not_found');
      expect((await t.http.get(`${base(w.sellerB)}/${foreign}`, { token: superuser.access })).body.balance).toBe(
        '0.00',
      );
    });
  });
});
