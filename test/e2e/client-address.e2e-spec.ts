import { createSeller, createUser, TestUser } from '../support/identity';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The client address (audit log, rate limits, public idempotency scopes) with TRUST_PROXY naming
 * the proxies: X-Forwarded-For is believed only as far as those proxies wrote it, so a client
 * cannot pick its own address by sending the header itself.
 */
describe('client address behind named proxies (TRUST_PROXY as a list)', () => {
  let t: TestApp;
  let superuser: TestUser;
  let seller: string;

  beforeAll(async () => {
    // The test client connects from the loopback address: it stands for the load balancer.
    t = await startTestApp({ env: { TRUST_PROXY: '127.0.0.1, ::1' } });
    superuser = await createUser(t, { superuser: true });
    seller = await createSeller(t, superuser);
  });
  afterAll(() => t.close());

  /** Creates an API key (an audited action) with these headers; answers the address its audit entry has. */
  const auditedAddress = async (headers: Record<string, string>) => {
    const res = await t.http.post(
      `/integrations/apikeys/${seller}/apikeys`,
      { label: 'k', description: '' },
      { token: superuser.access, headers },
    );
    expect(res.status).toBe(201);
    const { rows } = await t.db.query(`SELECT ip FROM audit_log WHERE action = 'api_key.created' AND target_id = $1`, [
      res.body.id,
    ]);
    return rows[0].ip as string;
  };

  it('is the address the trusted proxy saw, not one the client wrote into X-Forwarded-For', async () => {
    // The client sent "X-Forwarded-For: 198.51.100.9"; the proxy appended the address it saw.
    expect(await auditedAddress({ 'x-forwarded-for': '198.51.100.9, 203.0.113.5' })).toBe('203.0.113.5');
    expect(await auditedAddress({ 'x-forwarded-for': '203.0.113.5' })).toBe('203.0.113.5');
  });

  it('is the connection address when no proxy forwarded the request', async () => {
    expect(['127.0.0.1', '::1']).toContain(await auditedAddress({}));
  });
});
