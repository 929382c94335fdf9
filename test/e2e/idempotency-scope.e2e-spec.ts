import { createServer, connect, Server, Socket } from 'node:net';
import type { Permission } from '../../src/auth/permissions';
import { startApiProcess } from '../support/api-process';
import { createUser, grant, TestUser } from '../support/identity';
import { HttpClient } from '../support/http';
import { CARDS, payingSeller } from '../support/payments';
import { eventBody } from '../support/ticketed-events';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Idempotency-Key scope and crash safety on the money routes (API.md section 1): a key belongs
 * to its owner and names one request whatever the URL's spelling; a charge's key is tied to its
 * pending transaction; an answer that committed survives a kill -9 before it was sent.
 */
describe('Idempotency-Key on money routes', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: string;
  const path = (s = seller) => `/unified/accounts/sellers/${s}/transactions`;
  const charge = (body: object, key: string, url = `${path()}/`, token = superuser.access) =>
    t.http.post(url, body, { token, headers: { 'idempotency-key': key } });
  const count = async (sql: string, params: unknown[]) => (await t.db.query(sql, params)).rows[0].n as number;
  const transactionsOf = (description: string) =>
    count(`SELECT count(*)::int AS n FROM transactions WHERE description = $1`, [description]);

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    seller = (await payingSeller(t, superuser)).sellerId;
  });
  afterAll(() => t.close());

  it('charges once for every spelling of the URL (upper-case id, %2D, trailing or double slash)', async () => {
    const body = { amount: '41.00', payment_type: 'credit', card: CARDS.visa, description: 'spellings' };
    const spellings = [
      `${path()}/`,
      path(),
      `${path(seller.toUpperCase())}/`,
      `${path(seller.replace(/-/g, '%2D'))}/`,
      `${path(seller.replace(/-/g, '%2d').toUpperCase())}`,
      `/unified/accounts//sellers/${seller}/transactions/`,
      `/unified/accounts/sellers/${seller}//transactions//`,
    ];
    const answers = [];
    for (const url of spellings) answers.push(await charge(body, 'spelling-key', url));
    expect(answers.map((a) => a.status)).toEqual(spellings.map(() => 201));
    expect(answers.slice(1).every((a) => a.headers.get('idempotent-replayed') === 'true')).toBe(true);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await transactionsOf('spellings')).toBe(1);
    expect(
      await count(`SELECT count(*)::int AS n FROM sandbox_charges WHERE transaction_id = $1`, [answers[0].body.id]),
    ).toBe(1);
  });

  it('adds one split rule for every spelling of the transaction id, and refuses the key on another transaction', async () => {
    const a = (await charge({ amount: '50.00', payment_type: 'credit', card: CARDS.visa }, 'split-a')).body.id;
    const b = (await charge({ amount: '50.00', payment_type: 'credit', card: CARDS.visa }, 'split-b')).body.id;
    const recipient = seller;
    const rule = { recipient, amount: '1.00', amount_type: 'fixed' };
    const urls = [
      `${path()}/${a}/split/`,
      `${path()}/${a.toUpperCase()}/split`,
      `${path()}/${a.replace(/-/g, '%2D')}/split/`,
    ];
    const answers = [];
    for (const url of urls) answers.push(await charge(rule, 'rule-key', url));
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM transaction_split_rules WHERE transaction_id = $1`, [a])).toBe(
      1,
    );

    const other = await charge(rule, 'rule-key', `${path()}/${b}/split/`);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    const otherRoute = await charge({}, 'rule-key', `${path()}/${a}/void/`);
    expect(otherRoute.status).toBe(422);
    // Encoded twice, the id reaches the route as a literal `%2D` spelling: no transaction, not a replay of a's rule.
    const twice = await charge(rule, 'rule-key', `${path()}/${a.replace(/-/g, '%252D')}/split/`);
    expect(twice.status).toBe(422);
    expect(twice.headers.get('idempotent-replayed')).toBeNull();
    expect(await count(`SELECT count(*)::int AS n FROM transaction_split_rules WHERE transaction_id = $1`, [b])).toBe(
      0,
    );
  });

  it("scopes keys to their owner: another user's same key is its own; all API keys of a seller share theirs", async () => {
    const clerk = await createUser(t);
    await grant(t, superuser, seller, clerk, ['transactions.create', 'transactions.view']);
    const body = { amount: '7.00', payment_type: 'pix', description: 'owners' };
    const mine = await charge(body, 'shared-key');
    const theirs = await charge(body, 'shared-key', `${path()}/`, clerk.access);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await transactionsOf('owners')).toBe(2);
  });

  it('confirms a sandbox payment once per key: a repeat replays, the key on another payment is 422', async () => {
    const confirm = (path: string, key: string) =>
      t.http.post(path, undefined, { token: superuser.access, headers: { 'idempotency-key': key } });
    // A pix charge.
    const [pixA, pixB] = [
      (await charge({ amount: '9.00', payment_type: 'pix' }, 'confirm-pix-a')).body.id,
      (await charge({ amount: '9.00', payment_type: 'pix' }, 'confirm-pix-b')).body.id,
    ];
    const paid = await confirm(`/sandbox/transactions/${pixA}/confirm/`, 'confirm-tx');
    expect(paid.status).toBe(200);
    const replayed = await confirm(`/sandbox/transactions/${pixA.toUpperCase()}/confirm`, 'confirm-tx');
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(paid.body);
    const other = await confirm(`/sandbox/transactions/${pixB}/confirm/`, 'confirm-tx');
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect((await t.db.query('SELECT status FROM transactions WHERE id = $1', [pixB])).rows[0].status).toBe('pending');

    // A pix deposit into a virtual account.
    const { master } = await payingSeller(t, superuser);
    const sellerOfMaster = (await t.db.query('SELECT seller_id FROM ledger_accounts WHERE id = $1', [master])).rows[0]
      .seller_id;
    const deposit = (
      await t.http.post(
        `/uniconta/seller/${sellerOfMaster}/virtualaccounts/${master}/deposit/`,
        { amount: '25.00', method: 'pix' },
        { token: superuser.access },
      )
    ).body.id;
    const credited = await confirm(`/sandbox/deposits/${deposit}/confirm/`, 'confirm-deposit');
    const again = await confirm(`/sandbox/deposits/${deposit}/confirm/`, 'confirm-deposit');
    expect([credited.status, again.status]).toEqual([200, 200]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(credited.body);
    const balance = await t.http.get(`/uniconta/seller/${sellerOfMaster}/virtualaccounts/${master}/`, {
      token: superuser.access,
    });
    expect(balance.body.balance).toBe('25.00');
  });

  describe('a replay after the caller lost the access the first request needed', () => {
    /** A user with `permissions` on the seller, and the id of its access entry. */
    const operator = async (permissions: Permission[]) => {
      const user = await createUser(t);
      return { user, access: await grant(t, superuser, seller, user, permissions) };
    };
    const setPermissions = async (access: string, permissions: Permission[]) =>
      expect(
        (await t.http.patch(`/sellers/${seller}/accesses/${access}/`, { permissions }, { token: superuser.access }))
          .status,
      ).toBe(200);

    it('of a record found by id (a sandbox confirmation): refused as the first request would be now', async () => {
      const { user, access } = await operator(['transactions.create', 'transactions.view']);
      const pix = (await charge({ amount: '9.00', payment_type: 'pix' }, 'lost-access-pix')).body.id;
      const confirm = () =>
        t.http.post(`/sandbox/transactions/${pix}/confirm/`, undefined, {
          token: user.access,
          headers: { 'idempotency-key': 'lost-access-confirm' },
        });
      const paid = await confirm();
      expect(paid.status).toBe(200);
      expect((await confirm()).headers.get('idempotent-replayed')).toBe('true');

      await setPermissions(access, ['transactions.view']);
      const withoutPermission = await confirm();
      expect(withoutPermission.status).toBe(403);
      expect(withoutPermission.body.code).toBe('permission_denied');
      expect(withoutPermission.headers.get('idempotent-replayed')).toBeNull();

      expect((await t.http.delete(`/sellers/${seller}/accesses/${access}/`, { token: superuser.access })).status).toBe(
        204,
      );
      const withoutAccess = await confirm();
      expect(withoutAccess.status).toBe(404);
      expect(withoutAccess.body.code).toBe('transaction_not_found');
    });

    it('of a seller named in the body (an event): refused while the permission is gone, replayed once it is back', async () => {
      const { user, access } = await operator(['events.manage']);
      const body = eventBody(seller);
      const create = () =>
        t.http.post('/event/event/', body, {
          token: user.access,
          headers: { 'idempotency-key': 'lost-access-event' },
        });
      const created = await create();
      expect(created.status).toBe(201);

      await setPermissions(access, ['transactions.view']);
      const refused = await create();
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('permission_denied');

      await setPermissions(access, ['events.manage']);
      const replayed = await create();
      expect(replayed.status).toBe(201);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(replayed.body).toEqual(created.body);
      expect(await count(`SELECT count(*)::int AS n FROM ticketed_events WHERE seller_id = $1`, [seller])).toBe(1);
    });
  });

  describe('a charge interrupted after its pending transaction was written', () => {
    /** As if the process had died after the pending transaction, before the processor's answer was recorded. */
    const interrupt = async (key: string, id: string) => {
      await t.db.query(
        `UPDATE transactions SET status = 'pending', approved_at = NULL, processor_reference = NULL WHERE id = $1`,
        [id],
      );
      await t.db.query(`DELETE FROM outbox_events WHERE data->>'id' = $1`, [id]);
      await t.db.query(
        `UPDATE idempotency_keys SET status = 'in_progress', response_status = NULL, response_body = NULL,
           lease_until = now() - interval '1 second' WHERE key = $1`,
        [key],
      );
      const tied = await t.db.query(`SELECT resource_id FROM idempotency_keys WHERE key = $1`, [key]);
      expect(tied.rows[0].resource_id).toBe(id);
    };

    it('is resumed by a retry: the processor is asked, the transaction settled, nothing charged twice', async () => {
      const body = { amount: '12.00', payment_type: 'credit', card: CARDS.visa, description: 'resume-charged' };
      const first = await charge(body, 'resume-1');
      await interrupt('resume-1', first.body.id);
      const retry = await charge(body, 'resume-1');
      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ id: first.body.id, status: 'approved' });
      expect(await transactionsOf('resume-charged')).toBe(1);
      expect(
        await count(`SELECT count(*)::int AS n FROM sandbox_charges WHERE transaction_id = $1`, [first.body.id]),
      ).toBe(1);
      expect(
        await count(
          `SELECT count(*)::int AS n FROM outbox_events WHERE type = 'transaction.approved' AND data->>'id' = $1`,
          [first.body.id],
        ),
      ).toBe(1);
      const replay = await charge(body, 'resume-1');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(retry.body);
    });

    it('charges under the same idempotency key when the processor never received the charge', async () => {
      const body = { amount: '13.00', payment_type: 'credit', card: CARDS.visa, description: 'resume-uncharged' };
      const first = await charge(body, 'resume-2');
      await interrupt('resume-2', first.body.id);
      await t.db.query('DELETE FROM sandbox_charges WHERE transaction_id = $1', [first.body.id]);
      const retry = await charge(body, 'resume-2');
      expect(retry.body).toMatchObject({ id: first.body.id, status: 'approved' });
      expect(await transactionsOf('resume-uncharged')).toBe(1);
    });

    it('refuses another request on the key tied to the pending transaction, even after the lease', async () => {
      const body = { amount: '14.00', payment_type: 'credit', card: CARDS.visa, description: 'resume-other' };
      const first = await charge(body, 'resume-3');
      await interrupt('resume-3', first.body.id);
      const other = await charge({ ...body, amount: '15.00' }, 'resume-3');
      expect(other.status).toBe(422);
      expect(other.body.code).toBe('idempotency_key_reused');
    });
  });
});

/**
 * Forwards requests to the API and holds its answers back, so that the client sees no response
 * while the API has answered: a kill -9 then falls between the commit and the response.
 */
class AnswerSwallowingProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  url = '';

  async start(target: string): Promise<void> {
    const { hostname, port } = new URL(target);
    this.server = createServer((client) => {
      const upstream = connect(Number(port), hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => this.sockets.delete(socket));
      }
      client.pipe(upstream);
      upstream.on('data', () => undefined); // the answer goes nowhere
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('Idempotency-Key across a kill -9 between commit and response (two API processes)', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: string;

  beforeAll(async () => {
    t = await startTestApp();
    superuser = await createUser(t, { superuser: true });
    seller = (await payingSeller(t, superuser)).sellerId;
  });
  afterAll(() => t.close());

  it('replays the committed answer after the process that gave it died, on the other process and after restart', async () => {
    const [a, b] = await Promise.all([startApiProcess(t.databaseUrl), startApiProcess(t.databaseUrl)]);
    const proxy = new AnswerSwallowingProxy();
    try {
      await proxy.start(a.baseUrl);
      const url = `/unified/accounts/sellers/${seller}/transactions/`;
      const body = { amount: '99.00', payment_type: 'credit', card: CARDS.visa, description: 'kill-9' };
      const headers = { 'idempotency-key': 'kill-9-key' };
      const lost = new HttpClient(proxy.url).post(url, body, { token: superuser.access, headers }).catch((e) => e);

      // Wait until the charge's answer committed, then kill the process before the client hears it.
      for (;;) {
        const { rows } = await t.db.query(`SELECT status FROM idempotency_keys WHERE key = 'kill-9-key'`);
        if (rows[0]?.status === 'completed') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await a.kill();
      expect(await lost).not.toHaveProperty('status'); // the client got no answer: the connection dropped

      const retry = await new HttpClient(b.baseUrl).post(url, body, { token: superuser.access, headers });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toMatchObject({ status: 'approved', description: 'kill-9' });

      const restarted = await startApiProcess(t.databaseUrl);
      try {
        const again = await new HttpClient(restarted.baseUrl).post(url, body, { token: superuser.access, headers });
        expect(again.body).toEqual(retry.body);
      } finally {
        await restarted.stop();
      }
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM transactions WHERE description = 'kill-9'`);
      expect(rows[0].n).toBe(1);
      const charges = await t.db.query(`SELECT count(*)::int AS n FROM sandbox_charges WHERE transaction_id = $1`, [
        retry.body.id,
      ]);
      expect(charges.rows[0].n).toBe(1);
    } finally {
      await proxy.stop();
      await Promise.all([a.kill(), b.stop()]);
    }
  });
});
