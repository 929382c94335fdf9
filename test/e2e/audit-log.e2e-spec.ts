import { randomUUID } from 'node:crypto';
import type { AuditAction } from '../../src/audit/audit-log';
import { CARDS, payingSeller, PayingSeller, SPLIT_DETAILS, SPLIT_DETAILS_ONLINE } from '../support/payments';
import { createApiKey, createSeller, createUser, grant, TestUser, validCnpj } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The audit log (API.md section 12): every privileged or money-affecting action of this area
 * writes exactly one row, in the action's transaction, with the actor, the request id and the
 * client address; the database refuses to change or remove rows; superusers read it.
 */
describe('audit log', () => {
  let t: TestApp;
  let superuser: TestUser;
  let s: PayingSeller;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    s = await payingSeller(t, superuser);
  });
  afterAll(() => t.close());

  /** Sends one request with its own request id and answers the audit rows that request wrote. */
  async function audited(method: string, path: string, body?: unknown, token = superuser.access) {
    const requestId = randomUUID();
    const res = await t.http.request(method, path, { body, token, headers: { 'x-request-id': requestId } });
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    const { rows } = await t.db.query('SELECT * FROM audit_log WHERE request_id = $1', [requestId]);
    return { res, rows, requestId };
  }

  const transactions = () => `/unified/accounts/sellers/${s.sellerId}/transactions`;
  const charge = async () =>
    (
      await t.http.post(
        transactions(),
        { amount: '100.00', payment_type: 'credit', card: CARDS.visa },
        { token: superuser.access },
      )
    ).body.id as string;

  it('writes exactly one row per action, with actor, seller, target, request id and client address', async () => {
    const member = await createUser(t);
    const keyId = (await createApiKey(t, superuser.access, s.sellerId)).id;
    const txId = await charge();
    const other = (
      await t.http.post(`/sellers/${s.sellerId}/subaccounts`, { name: 'Other' }, { token: superuser.access })
    ).body.id as string;
    let accessId = '';
    let ruleId = '';
    let depositId = '';
    let createdSeller = '';
    let splitPlanId = '';
    const steps: Array<{
      action: AuditAction;
      run: () => ReturnType<typeof audited>;
      target: () => { type: string; id: string };
      seller: string | null;
    }> = [
      {
        action: 'seller.created',
        run: async () => {
          const r = await audited('POST', '/sellers', {
            name: 'Audited seller',
            document: validCnpj(),
            email: 'audited@example.com',
          });
          createdSeller = r.res.body.id;
          return r;
        },
        target: () => ({ type: 'seller', id: createdSeller }),
        get seller() {
          return createdSeller;
        },
      },
      {
        action: 'split_plan.created',
        run: async () => {
          const r = await audited('POST', '/plans/plans/split', {
            name: 'Audited plan',
            rate_plan: s.ratePlanId,
            split_details: SPLIT_DETAILS,
            split_details_online: SPLIT_DETAILS_ONLINE,
          });
          splitPlanId = r.res.body.id;
          return r;
        },
        target: () => ({ type: 'split_plan', id: splitPlanId }),
        seller: null,
      },
      {
        action: 'access.granted',
        run: async () => {
          const r = await audited('POST', `/sellers/${s.sellerId}/accesses`, {
            user: member.id,
            permissions: ['transactions.view'],
          });
          accessId = r.res.body.id;
          return r;
        },
        target: () => ({ type: 'access', id: accessId }),
        seller: s.sellerId,
      },
      {
        action: 'access.changed',
        run: () =>
          audited('PATCH', `/sellers/${s.sellerId}/accesses/${accessId}`, { permissions: ['transactions.void'] }),
        target: () => ({ type: 'access', id: accessId }),
        seller: s.sellerId,
      },
      {
        action: 'access.revoked',
        run: () => audited('DELETE', `/sellers/${s.sellerId}/accesses/${accessId}`),
        target: () => ({ type: 'access', id: accessId }),
        seller: s.sellerId,
      },
      {
        action: 'api_key.created',
        run: () => audited('POST', `/integrations/apikeys/${s.sellerId}/apikeys`, { label: 'k', description: '' }),
        target: () => ({ type: 'api_key', id: expect.any(String) }),
        seller: s.sellerId,
      },
      {
        action: 'api_key.changed',
        run: () => audited('PATCH', `/integrations/apikeys/${s.sellerId}/apikeys/${keyId}`, { active: false }),
        target: () => ({ type: 'api_key', id: keyId }),
        seller: s.sellerId,
      },
      {
        action: 'api_key.deleted',
        run: () => audited('DELETE', `/integrations/apikeys/${s.sellerId}/apikeys/${keyId}`),
        target: () => ({ type: 'api_key', id: keyId }),
        seller: s.sellerId,
      },
      {
        action: 'seller.commercial_terms_changed',
        run: () => audited('PATCH', `/sellers/${s.sellerId}`, { developer_account: s.master }),
        target: () => ({ type: 'seller', id: s.sellerId }),
        seller: s.sellerId,
      },
      {
        action: 'transaction.split_rule_created',
        run: async () => {
          const r = await audited('POST', `${transactions()}/${txId}/split`, {
            recipient: s.master,
            amount: '1.00',
            amount_type: 'fixed',
          });
          ruleId = r.res.body.id;
          return r;
        },
        target: () => ({ type: 'split_rule', id: ruleId }),
        seller: s.sellerId,
      },
      {
        action: 'transaction.split_rule_deleted',
        run: () => audited('DELETE', `${transactions()}/${txId}/split/${ruleId}`),
        target: () => ({ type: 'split_rule', id: ruleId }),
        seller: s.sellerId,
      },
      {
        action: 'transaction.voided',
        run: () => audited('POST', `${transactions()}/${txId}/void`, { reason: 'test' }),
        target: () => ({ type: 'transaction', id: txId }),
        seller: s.sellerId,
      },
      {
        action: 'virtual_account.manual_deposit',
        run: async () => {
          const r = await audited('POST', `/uniconta/seller/${s.sellerId}/virtualaccounts/${s.master}/deposit`, {
            amount: '10.00',
            method: 'manual',
            reason: 'Reconciled wire',
          });
          depositId = r.res.body.id;
          return r;
        },
        target: () => ({ type: 'deposit', id: depositId }),
        seller: s.sellerId,
      },
      // Money leaving a virtual account, to another one or out of the platform.
      {
        action: 'virtual_account.transfer',
        run: () =>
          audited('POST', `/uniconta/seller/${s.sellerId}/virtualaccounts/${s.master}/transfer`, {
            amount: '2.00',
            destination: { virtual_account: other },
          }),
        target: () => ({ type: 'virtual_account', id: s.master }),
        seller: s.sellerId,
      },
      {
        action: 'virtual_account.transfer',
        run: () =>
          audited('POST', `/uniconta/seller/${s.sellerId}/virtualaccounts/${s.master}/transfer`, {
            amount: '1.00',
            description: 'Supplier',
            destination: { pix_key: 'supplier@example.com' },
          }),
        target: () => ({ type: 'virtual_account', id: s.master }),
        seller: s.sellerId,
      },
      {
        action: 'virtual_account.payment',
        run: () =>
          audited('POST', `/uniconta/seller/${s.sellerId}/virtualaccounts/${s.master}/pay`, {
            amount: '1.50',
            payee: { name: 'Energia' },
            barcode: '8'.repeat(44),
          }),
        target: () => ({ type: 'virtual_account', id: s.master }),
        seller: s.sellerId,
      },
      {
        action: 'user.superuser_granted',
        run: () => audited('PATCH', `/users/${member.id}`, { is_superuser: true }),
        target: () => ({ type: 'user', id: member.id }),
        seller: null,
      },
      {
        action: 'user.superuser_revoked',
        run: () => audited('PATCH', `/users/${member.id}`, { is_superuser: false }),
        target: () => ({ type: 'user', id: member.id }),
        seller: null,
      },
      {
        action: 'user.deactivated',
        run: () => audited('PATCH', `/users/${member.id}`, { active: false }),
        target: () => ({ type: 'user', id: member.id }),
        seller: null,
      },
      {
        action: 'user.activated',
        run: () => audited('PATCH', `/users/${member.id}`, { active: true }),
        target: () => ({ type: 'user', id: member.id }),
        seller: null,
      },
    ];
    for (const step of steps) {
      const { rows, requestId } = await step.run();
      expect({ action: step.action, rows }).toEqual({
        action: step.action,
        rows: [
          expect.objectContaining({
            action: step.action,
            actor_kind: 'user',
            actor_id: superuser.id,
            seller_id: step.seller,
            target_type: step.target().type,
            target_id: step.target().id,
            request_id: requestId,
            ip: '127.0.0.1',
          }),
        ],
      });
    }

    const moved = await t.db.query(
      `SELECT action, changes FROM audit_log WHERE action IN ('virtual_account.transfer', 'virtual_account.payment')
        AND seller_id = $1 ORDER BY seq`,
      [s.sellerId],
    );
    expect(moved.rows).toEqual([
      {
        action: 'virtual_account.transfer',
        changes: { amount: '2.00', destination: { virtual_account: other } },
      },
      {
        action: 'virtual_account.transfer',
        changes: {
          amount: '1.00',
          destination: { pix_key: 'supplier@example.com' },
          description: 'Supplier',
          payout: expect.any(String),
        },
      },
      {
        action: 'virtual_account.payment',
        changes: {
          amount: '1.50',
          destination: { payee: { name: 'Energia', document: null }, barcode: '8'.repeat(44) },
          payout: expect.any(String),
        },
      },
    ]);

    const changed = await t.db.query(
      `SELECT changes FROM audit_log WHERE action = 'access.changed' AND target_id = $1`,
      [accessId],
    );
    expect(changed.rows[0].changes).toEqual({
      user: member.id,
      permissions: { from: ['transactions.view'], to: ['transactions.void'] },
    });
    const terms = await t.db.query(
      `SELECT changes FROM audit_log WHERE action = 'seller.commercial_terms_changed' AND seller_id = $1`,
      [s.sellerId],
    );
    expect(terms.rows.at(-1).changes).toEqual({ developer_account: { from: s.developer, to: s.master } });
    // A deleted split rule is recorded as it was.
    const ruleDeleted = await t.db.query(
      `SELECT changes FROM audit_log WHERE action = 'transaction.split_rule_deleted' AND target_id = $1`,
      [ruleId],
    );
    expect(ruleDeleted.rows[0].changes).toEqual({
      transaction: txId,
      recipient: s.master,
      amount: '1.00',
      amount_type: 'fixed',
    });
  });

  it('writes nothing when the action fails or changes nothing', async () => {
    const before = Number((await t.db.query('SELECT count(*) FROM audit_log')).rows[0].count);
    const txId = await charge();
    await t.http.post(`${transactions()}/${txId}/void`, {}, { token: superuser.access });
    // a second void is refused: no second row
    expect((await t.http.post(`${transactions()}/${txId}/void`, {}, { token: superuser.access })).status).toBe(409);
    // the same value again is no change
    await t.http.patch(`/sellers/${s.sellerId}`, { rate_plan: s.ratePlanId }, { token: superuser.access });
    // a refused escalation leaves no trace but the refusal
    const manager = await createUser(t);
    await grant(t, superuser, s.sellerId, manager, ['accesses.manage']);
    const other = await createUser(t);
    const refused = await t.http.post(
      `/sellers/${s.sellerId}/accesses`,
      { user: other.id, permissions: ['seller.manage'] },
      { token: manager.access },
    );
    expect(refused.status).toBe(403);
    // money the account does not have is not moved: inside (the movement is the transaction's last
    // statement, behind the audit row) or out of the platform
    const empty = (
      await t.http.post(`/sellers/${s.sellerId}/subaccounts`, { name: 'Empty' }, { token: superuser.access })
    ).body.id as string;
    const accounts = `/uniconta/seller/${s.sellerId}/virtualaccounts`;
    for (const destination of [{ virtual_account: s.master }, { pix_key: 'supplier@example.com' }]) {
      const overdrawn = await t.http.post(
        `${accounts}/${empty}/transfer`,
        { amount: '1.00', destination },
        { token: superuser.access },
      );
      expect(overdrawn.body.code).toBe('insufficient_funds');
    }
    const after = Number((await t.db.query('SELECT count(*) FROM audit_log')).rows[0].count);
    // the void and the superuser's grant to the manager
    expect(after - before).toBe(2);
  });

  it('moves no money when its audit row cannot be written (one transaction)', async () => {
    const accounts = `/uniconta/seller/${s.sellerId}/virtualaccounts`;
    const [from, to] = await Promise.all(
      ['Audited from', 'Audited to'].map(
        async (name) =>
          (await t.http.post(`/sellers/${s.sellerId}/subaccounts`, { name }, { token: superuser.access })).body
            .id as string,
      ),
    );
    await t.http.post(
      `${accounts}/${from}/deposit`,
      { amount: '10.00', method: 'manual', reason: 'Reconciled wire' },
      { token: superuser.access },
    );
    const balances = async () =>
      Promise.all(
        [from, to].map(async (id) => (await t.http.get(`${accounts}/${id}`, { token: superuser.access })).body.balance),
      );
    const before = await balances();
    await t.db.query(`
      CREATE FUNCTION refuse_audit_row() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'audit log unavailable'; END $$`);
    await t.db.query(
      `CREATE TRIGGER refuse_audit_row BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit_row()`,
    );
    try {
      for (const destination of [{ virtual_account: to }, { pix_key: 'supplier@example.com' }]) {
        const res = await t.http.post(
          `${accounts}/${from}/transfer`,
          { amount: '1.00', destination },
          { token: superuser.access },
        );
        expect(res.status).toBe(500);
      }
    } finally {
      await t.db.query('DROP TRIGGER refuse_audit_row ON audit_log');
      await t.db.query('DROP FUNCTION refuse_audit_row()');
    }
    expect(await balances()).toEqual(before);
    expect((await t.db.query('SELECT count(*)::int AS n FROM payouts WHERE account_id = $1', [from])).rows[0].n).toBe(
      0,
    );
  });

  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused', async () => {
    const { rows } = await t.db.query('SELECT id FROM audit_log LIMIT 1');
    expect(rows).toHaveLength(1);
    await expect(t.db.query(`UPDATE audit_log SET action = 'x.y' WHERE id = $1`, [rows[0].id])).rejects.toThrow(
      /append-only/,
    );
    await expect(t.db.query('DELETE FROM audit_log WHERE id = $1', [rows[0].id])).rejects.toThrow(/append-only/);
    await expect(t.db.query('TRUNCATE audit_log')).rejects.toThrow(/append-only/);
  });

  describe('GET /audit/', () => {
    it('lists entries newest first in keyset pages, filtered by actor, seller, action and created_after', async () => {
      const seller = await createSeller(t, superuser);
      const manager = await createUser(t);
      await grant(t, superuser, seller, manager, ['accesses.manage', 'transactions.view']);
      const since = new Date().toISOString();
      const granted: string[] = [];
      for (let i = 0; i < 3; i++) {
        const user = await createUser(t);
        granted.push(
          (
            await t.http.post(
              `/sellers/${seller}/accesses`,
              { user: user.id, permissions: ['transactions.view'] },
              { token: manager.access },
            )
          ).body.id,
        );
      }
      const query = `seller=${seller}&actor=${manager.id}&action=access.granted&created_after=${since}`;
      const first = await t.http.get(`/audit?${query}&limit=2`, { token: superuser.access });
      expect(first.status).toBe(200);
      expect(first.body.results.map((e: { target: { id: string } }) => e.target.id)).toEqual([granted[2], granted[1]]);
      expect(first.body.results[0]).toEqual({
        id: expect.any(String),
        actor: { kind: 'user', id: manager.id },
        action: 'access.granted',
        seller,
        target: { type: 'access', id: granted[2] },
        changes: { user: expect.any(String), permissions: ['transactions.view'] },
        request_id: expect.any(String),
        ip: '127.0.0.1',
        created_at: expect.any(String),
      });
      const second = await t.http.get(`/audit?${query}&limit=2&cursor=${first.body.next_cursor}`, {
        token: superuser.access,
      });
      expect(second.body.results.map((e: { target: { id: string } }) => e.target.id)).toEqual([granted[0]]);
      expect(second.body.next_cursor).toBeNull();

      const bySeller = await t.http.get(`/audit?seller=${seller}&limit=100`, { token: superuser.access });
      // The seller's creation, the superuser's grant to the manager, and the 3 grants.
      expect(bySeller.body.results.map((e: { action: string }) => e.action)).toEqual([
        'access.granted',
        'access.granted',
        'access.granted',
        'access.granted',
        'seller.created',
      ]);
      const future = await t.http.get(`/audit?seller=${seller}&created_after=2999-01-01T00:00:00Z`, {
        token: superuser.access,
      });
      expect(future.body.results).toEqual([]);
    });

    it('validates its filters with the field path', async () => {
      const res = await t.http.get('/audit?actor=nope&created_after=yesterday&action=DROP', {
        token: superuser.access,
      });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.errors).sort()).toEqual(['action', 'actor', 'created_after']);
    });
  });
});
