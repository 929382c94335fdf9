import { formatMoney } from '../../src/common/money/money';
import { MatrixWorld, matrixWorld, RouteCase, runMatrix, UNAUTHENTICATED } from '../support/auth-matrix';
import { createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/** Virtual accounts (spec 2.6, 4.5; API.md section 9). */
describe('virtual accounts', () => {
  let t: TestApp;
  let w: MatrixWorld;
  let superuser: TestUser;
  let seller: string;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    w = await matrixWorld(t, { superuser });
    seller = w.sellerA;
  });
  afterAll(() => t.close());

  const subaccount = async (sellerId = seller, name = 'Conta') =>
    (await t.http.post(`/sellers/${sellerId}/subaccounts`, { name }, { token: superuser.access })).body.id as string;
  const base = (sellerId = seller) => `/uniconta/seller/${sellerId}/virtualaccounts`;
  const act = (id: string, action: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http.post(`${base()}/${id}/${action}`, body, { token: superuser.access, headers });
  const balance = async (id: string) => (await t.http.get(`${base()}/${id}`, { token: superuser.access })).body.balance;

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

  it('deposits, pays and transfers, with a posting per action and the balance after it', async () => {
    const a = await subaccount();
    const b = await subaccount();
    const deposit = await act(a, 'deposit', { amount: '100.00', description: 'Top-up', external_reference: 'wire-1' });
    expect(deposit.status).toBe(201);
    expect(deposit.body).toEqual({
      id: expect.any(String),
      virtual_account: a,
      type: 'deposit',
      amount: '100.00',
      balance_after: '100.00',
      description: 'Top-up',
      counterparty: { external_reference: 'wire-1' },
      journal_entry: expect.any(String),
      created_at: expect.any(String),
    });
    const pay = await act(a, 'pay', {
      amount: '30.50',
      description: 'Bill',
      payee: { name: 'Energia', document: '11222333000181' },
      barcode: '8'.repeat(44),
    });
    expect(pay.body).toMatchObject({
      type: 'payment',
      amount: '30.50',
      balance_after: '69.50',
      counterparty: { payee: { name: 'Energia' }, barcode: '8'.repeat(44) },
    });
    const internal = await act(a, 'transfer', { amount: '19.50', destination: { virtual_account: b } });
    expect(internal.body).toMatchObject({
      type: 'transfer_out',
      amount: '19.50',
      balance_after: '50.00',
      counterparty: { virtual_account: b },
    });
    const pix = await act(a, 'transfer', { amount: '10.00', destination: { pix_key: 'ana@example.com' } });
    expect(pix.body).toMatchObject({
      type: 'transfer_out',
      balance_after: '40.00',
      counterparty: { pix_key: 'ana@example.com' },
    });
    const bank = await act(b, 'transfer', {
      amount: '9.50',
      destination: { bank_account: { bank: '341', branch: '0001', account: '12345-6', document: '52998224725' } },
    });
    expect(bank.body).toMatchObject({ type: 'transfer_out', balance_after: '10.00' });

    expect(await balance(a)).toBe('40.00');
    expect(await balance(b)).toBe('10.00');

    const statement = await t.http.get(`${base()}/${a}/postings`, { token: superuser.access });
    expect(
      statement.body.results.map((p: { type: string; amount: string; balance_after: string }) => [
        p.type,
        p.amount,
        p.balance_after,
      ]),
    ).toEqual([
      ['transfer_out', '10.00', '40.00'],
      ['transfer_out', '19.50', '50.00'],
      ['payment', '30.50', '69.50'],
      ['deposit', '100.00', '100.00'],
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
    const oldest = await t.http.get(`${base()}/${a}/postings?ordering=created_at&limit=1`, { token: superuser.access });
    expect(oldest.body.results[0].type).toBe('deposit');
    const next = await t.http.get(
      `${base()}/${a}/postings?ordering=created_at&limit=1&cursor=${oldest.body.next_cursor}`,
      { token: superuser.access },
    );
    expect(next.body.results[0].type).toBe('payment');

    const events = await t.db.query(
      `SELECT type, count(*)::int AS n FROM outbox_events WHERE data->>'virtual_account' IN ($1, $2) GROUP BY type ORDER BY type`,
      [a, b],
    );
    expect(events.rows).toEqual([
      { type: 'virtual_account.deposit', n: 1 },
      { type: 'virtual_account.payment', n: 1 },
      { type: 'virtual_account.transfer', n: 4 },
    ]);
  });

  it('puts the posting, exactly as the API shows it, in the outbox event', async () => {
    const a = await subaccount();
    const deposit = await act(a, 'deposit', { amount: '1234567.89', description: 'Big one' });
    const { rows } = await t.db.query(
      `SELECT type, seller_id, data FROM outbox_events WHERE data->'posting'->>'id' = $1`,
      [deposit.body.id],
    );
    expect(rows).toEqual([
      {
        type: 'virtual_account.deposit',
        seller_id: seller,
        data: { virtual_account: a, journal_entry: deposit.body.journal_entry, posting: deposit.body },
      },
    ]);
  });

  it('formats money in SQL exactly as the money helper does', async () => {
    const samples = [0, 1, 9, 10, 99, 100, 101, 12_345, 100_000_000_000, -1, -150, 987_654_321];
    for (let i = 0; i < 200; i++) samples.push(Math.floor(Math.random() * 2_000_000_000_000) - 1_000_000_000_000);
    const { rows } = await t.db.query(
      `SELECT c::text AS cents, ledger_money_text(c) AS text FROM unnest($1::bigint[]) AS c`,
      [samples],
    );
    for (const row of rows) expect(row.text).toBe(formatMoney(Number(row.cents)));
  });

  it('writes one balanced journal entry per action, with system accounts for the outside world', async () => {
    const a = await subaccount();
    const deposit = await act(a, 'deposit', { amount: '5.00' });
    const { rows } = await t.db.query(
      `SELECT l.amount::int AS amount, acc.kind FROM ledger_lines l JOIN ledger_accounts acc ON acc.id = l.account_id WHERE l.entry_id = $1 ORDER BY l.amount`,
      [deposit.body.journal_entry],
    );
    expect(rows).toEqual([
      { amount: -500, kind: 'system' },
      { amount: 500, kind: 'virtual' },
    ]);
  });

  it('refuses to go below zero with 400 insufficient_funds and writes nothing', async () => {
    const a = await subaccount();
    const b = await subaccount();
    await act(a, 'deposit', { amount: '10.00' });
    const lines = async () => (await t.db.query(`SELECT count(*)::int AS n FROM ledger_lines`)).rows[0].n;
    const before = await lines();
    for (const [action, body] of [
      ['pay', { amount: '10.01', payee: { name: 'X' }, barcode: '1'.repeat(47) }],
      ['transfer', { amount: '10.01', destination: { virtual_account: b } }],
      ['transfer', { amount: '10.01', destination: { pix_key: 'x@example.com' } }],
    ] as const) {
      const res = await act(a, action, body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('insufficient_funds');
    }
    expect(await lines()).toBe(before);
    expect(await balance(a)).toBe('10.00');
    expect(await balance(b)).toBe('0.00');
    expect(
      (await act(a, 'pay', { amount: '10.00', payee: { name: 'X' }, barcode: '1'.repeat(47) })).body.balance_after,
    ).toBe('0.00');
  });

  it('refuses to hold more than the balance limit', async () => {
    const a = await subaccount();
    await t.db.query(`UPDATE ledger_accounts SET balance = 99999999999999, last_line = last_line + 1 WHERE id = $1`, [
      a,
    ]);
    const res = await act(a, 'deposit', { amount: '0.02' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('balance_limit_exceeded');
    expect((await act(a, 'deposit', { amount: '0.01' })).status).toBe(201);
  });

  it('validates amounts, destinations and payees', async () => {
    const a = await subaccount();
    await act(a, 'deposit', { amount: '50.00' });
    const cases: Array<[string, unknown, string]> = [
      ['deposit', { amount: '0.00' }, 'amount'],
      ['deposit', { amount: 5 }, 'amount'],
      ['deposit', { amount: '-1.00' }, 'amount'],
      ['deposit', { amount: '10000000.01' }, 'amount'],
      ['pay', { amount: '1.00', barcode: '123', payee: { name: 'X' } }, 'barcode'],
      ['pay', { amount: '1.00', barcode: '1'.repeat(44) }, 'payee'],
      ['pay', { amount: '1.00', barcode: '1'.repeat(44), payee: { name: 'X', document: '123' } }, 'payee.document'],
      ['transfer', { amount: '1.00' }, 'destination'],
      ['transfer', { amount: '1.00', destination: {} }, 'destination'],
      ['transfer', { amount: '1.00', destination: { pix_key: 'a@b.c', virtual_account: a } }, 'destination'],
      [
        'transfer',
        {
          amount: '1.00',
          destination: { bank_account: { bank: '1', branch: '0001', account: '1', document: '52998224725' } },
        },
        'destination.bank_account.bank',
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
    const moved = await act(a.toUpperCase(), 'transfer', {
      amount: '4.00',
      destination: { virtual_account: b.toUpperCase() },
    });
    expect(moved.status).toBe(201);
    expect(moved.body.balance_after).toBe('5.00');
    expect(await balance(b)).toBe('4.00');
  });

  it('replays an action sent again with the same Idempotency-Key', async () => {
    const a = await subaccount();
    const first = await act(a, 'deposit', { amount: '7.00' }, { 'idempotency-key': 'deposit-once' });
    const again = await act(a, 'deposit', { amount: '7.00' }, { 'idempotency-key': 'deposit-once' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await balance(a)).toBe('7.00');
  });

  it('never updates or deletes a posting, nor deletes an account, even from SQL', async () => {
    const a = await subaccount();
    await act(a, 'deposit', { amount: '1.00' });
    await expect(t.db.query(`UPDATE ledger_lines SET amount = 1000 WHERE account_id = $1`, [a])).rejects.toThrow(
      /append-only/,
    );
    await expect(t.db.query(`DELETE FROM journal_entries`)).rejects.toThrow(/append-only/);
    await expect(t.db.query(`DELETE FROM ledger_accounts WHERE id = $1`, [a])).rejects.toThrow(/append-only/);
    await expect(
      t.db.query(`UPDATE ledger_accounts SET balance = -1, last_line = last_line + 1 WHERE id = $1`, [a]),
    ).rejects.toThrow(/no_overdraft/);
    await expect(t.db.query(`UPDATE ledger_accounts SET seller_id = $2 WHERE id = $1`, [a, w.sellerB])).rejects.toThrow(
      /only its balance moves/,
    );
    await expect(t.db.query(`TRUNCATE ledger_lines CASCADE`)).rejects.toThrow(/append-only/);
    await expect(
      t.db.query(
        `WITH e AS (INSERT INTO journal_entries (kind, seller_id) VALUES ('deposit', $2) RETURNING id)
                  INSERT INTO ledger_lines (entry_id, account_id, type, amount, account_line, balance_after) SELECT e.id, $1, 'deposit', 5, 999, 5 FROM e`,
        [a, seller],
      ),
    ).rejects.toThrow(/does not balance/);
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
      expect(res.headers.get('allow')).toBe('GET');
      expect(res.body.code).toBe('method_not_allowed');
    }
    expect(await balance(a)).toBe('0.00');
  });

  describe('auth matrix', () => {
    const reads = (ok: number) => ({
      ...UNAUTHENTICATED,
      noAccess: 404,
      noPermission: 403,
      permitted: ok,
      superuser: ok,
      apiKey: 403,
      otherSellerKey: 403,
    });
    const writes = reads;
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
      'POST virtualaccounts/{id}/deposit': {
        method: 'POST',
        request: async () => ({ path: `${base()}/${await subaccount()}/deposit`, body: { amount: '1.00' } }),
        expect: writes(201),
      },
      'POST virtualaccounts/{id}/pay': {
        method: 'POST',
        request: async () => {
          const id = await subaccount();
          await act(id, 'deposit', { amount: '5.00' });
          return {
            path: `${base()}/${id}/pay`,
            body: { amount: '1.00', payee: { name: 'X' }, barcode: '1'.repeat(44) },
          };
        },
        expect: writes(201),
      },
      'POST virtualaccounts/{id}/transfer': {
        method: 'POST',
        request: async () => {
          const id = await subaccount();
          await act(id, 'deposit', { amount: '5.00' });
          return {
            path: `${base()}/${id}/transfer`,
            body: { amount: '1.00', destination: { pix_key: 'x@example.com' } },
          };
        },
        expect: writes(201),
      },
    };
    for (const [name, route] of Object.entries(routes)) {
      it(`${name}: every kind of caller gets its status`, async () => {
        const { got, want } = await runMatrix(t, w.callers, route);
        expect(got).toEqual(want);
      });
    }

    it("answers 404 for another seller's virtual account through this seller's path", async () => {
      const foreign = await subaccount(w.sellerB);
      expect((await t.http.get(`${base()}/${foreign}`, { token: superuser.access })).status).toBe(404);
      expect((await act(foreign, 'deposit', { amount: '1.00' })).status).toBe(404);
      expect((await t.http.get(`${base()}/${foreign}/postings`, { token: w.callers.permitted })).status).toBe(404);
    });
  });
});
