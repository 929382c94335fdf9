import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from '../../src/common/net/free-port';
import { isProcessAlive } from '../../src/database/data-dir-lock';
import { spawnApi } from '../support/api-process';
import { createTestDatabase, dropTestDatabase, templateUrl, withDatabase } from '../support/database';
import { TcpProxy } from '../support/tcp-proxy';

/** Start-up and stop of real API processes: an absent database, a crash, `npm start`. */
describe('process lifecycle', () => {
  const until = async (condition: () => boolean, what: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  describe('DATABASE_URL', () => {
    it('pointing at nothing: retries for DATABASE_WAIT_TIMEOUT, then stops with a message naming it, no password', async () => {
      const port = await findFreePort();
      const api = await spawnApi({
        DATABASE_URL: `postgres://payments:sekret-pw@127.0.0.1:${port}/payments`,
        DATABASE_WAIT_TIMEOUT: '2',
      });
      const exit = await api.exited;
      expect(exit.code).toBe(1);
      const output = api.output();
      expect(output).toMatch(
        new RegExp(`DATABASE_URL \\(postgres://\\*\\*\\*@127\\.0\\.0\\.1:${port}/payments\\) is not reachable`),
      );
      expect(output).toMatch(/Cannot reach the database of DATABASE_URL .* after 2 s \(\d+ attempts\): .*ECONNREFUSED/);
      expect(output).not.toContain('sekret-pw');
    });

    it('naming a database that does not exist: stops at once, without waiting for it', async () => {
      const url = withDatabase(templateUrl(), 'payments_no_such_database');
      const api = await spawnApi({ DATABASE_URL: url, DATABASE_WAIT_TIMEOUT: '300' });
      expect((await api.exited).code).toBe(1);
      expect(api.output()).toMatch(
        /Cannot use the database of DATABASE_URL .*payments_no_such_database.*does not exist/,
      );
      expect(api.output()).not.toContain('is not reachable');
    });

    it('starts once the database becomes reachable within the wait', async () => {
      const databaseUrl = await createTestDatabase();
      const target = new URL(databaseUrl);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      proxy.port = await findFreePort();
      const api = await spawnApi({ DATABASE_URL: proxy.urlFor(databaseUrl), DATABASE_WAIT_TIMEOUT: '60' });
      try {
        await until(() => /is not reachable/.test(api.output()), 'the first failed attempt', 60_000);
        await proxy.start(proxy.port);
        await api.ready();
        expect(api.output()).toMatch(/The database of DATABASE_URL \(.*\) answers now/);
        expect(api.output()).not.toContain('PAYMENTS_PROCESSOR=sandbox in production');
        api.child.kill('SIGTERM');
        expect(await api.exited).toEqual({ code: 0, signal: null });
      } finally {
        api.child.kill('SIGKILL');
        await proxy.cut();
        await dropTestDatabase(databaseUrl);
      }
    });
  });

  it('in production with the sandbox processor, says at start-up that payments are simulated and self-confirmable', async () => {
    const databaseUrl = await createTestDatabase();
    const api = await spawnApi({ DATABASE_URL: databaseUrl, NODE_ENV: 'production' });
    try {
      await api.ready();
      expect(api.output()).toMatch(
        /"level":40,.*"msg":"PAYMENTS_PROCESSOR=sandbox in production: charges and payouts are simulated, .*Do not take real payments with it\."/,
      );
    } finally {
      api.child.kill('SIGKILL');
      await api.exited;
      await dropTestDatabase(databaseUrl);
    }
  });

  describe('DATA_DIR', () => {
    it('that is a file, not a folder: stops at once with a message naming it', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'payments-data-dir-'));
      const file = join(folder, 'a-file');
      writeFileSync(file, '');
      try {
        const api = await spawnApi({ DATABASE_URL: undefined, JWT_SECRET: '', DATA_DIR: file });
        expect((await api.exited).code).toBe(1);
        expect(api.output()).toContain(`DATA_DIR must be a folder this process can write to (${file}: EEXIST`);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });

  describe('the JWT secret kept in DATA_DIR', () => {
    it('made whole on first start and kept; a file holding no usable secret (hand-edited, emptied) stops start-up naming it', async () => {
      const folder = mkdtempSync(join(tmpdir(), 'payments-jwt-secret-'));
      const databaseUrl = await createTestDatabase();
      try {
        for (const content of ['x', '', ' '.repeat(40)]) {
          writeFileSync(join(folder, 'jwt-secret'), content);
          const api = await spawnApi({ DATABASE_URL: databaseUrl, JWT_SECRET: undefined, DATA_DIR: folder });
          expect((await api.exited).code).toBe(1);
          expect(api.output()).toContain(`${join(folder, 'jwt-secret')} must hold a secret of at least 32 characters`);
        }
        // No file: one is made, whole, and the next start signs with the same secret.
        rmSync(join(folder, 'jwt-secret'));
        const secrets: string[] = [];
        for (let start = 0; start < 2; start++) {
          const api = await spawnApi({ DATABASE_URL: databaseUrl, JWT_SECRET: undefined, DATA_DIR: folder });
          await api.ready();
          secrets.push(readFileSync(join(folder, 'jwt-secret'), 'utf8'));
          api.child.kill('SIGTERM');
          await api.exited;
        }
        expect(secrets[0].length).toBeGreaterThanOrEqual(32);
        expect(secrets[1]).toBe(secrets[0]);
        expect(readdirSync(folder).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      } finally {
        await dropTestDatabase(databaseUrl);
        rmSync(folder, { recursive: true, force: true });
      }
    });
  });

  describe('embedded PostgreSQL', () => {
    let dataDir: string;
    const postmasterPid = () =>
      Number.parseInt(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0], 10);

    beforeAll(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'payments-lifecycle-'));
      chmodSync(dataDir, 0o755); // the cluster runs as the "postgres" user when tests run as root
    });
    afterAll(() => {
      if (existsSync(join(dataDir, 'postgres', 'postmaster.pid'))) {
        const pid = postmasterPid();
        if (isProcessAlive(pid)) process.kill(pid, 'SIGINT');
      }
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('after kill -9 of the API, the next start stops the leftover PostgreSQL, says so, and runs', async () => {
      const first = await spawnApi({ DATABASE_URL: undefined, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      await first.ready();
      const leftover = postmasterPid();
      first.child.kill('SIGKILL');
      await first.exited;
      expect(isProcessAlive(leftover)).toBe(true);

      const second = await spawnApi({ DATABASE_URL: undefined, DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      try {
        await second.ready();
        expect(second.output()).toContain(`still running (pid ${leftover})`);
        expect(second.output()).toContain(`The leftover PostgreSQL (pid ${leftover}) has stopped`);
        expect(isProcessAlive(leftover)).toBe(false);
        const current = postmasterPid();
        expect(current).not.toBe(leftover);
        expect((await fetch(`${second.baseUrl}/health/ready`)).status).toBe(200);

        second.child.kill('SIGTERM');
        expect(await second.exited).toEqual({ code: 0, signal: null });
        expect(isProcessAlive(current)).toBe(false);
        expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
      } finally {
        second.child.kill('SIGKILL');
      }
    });

    it('SIGTERM to `npm start` stops the API and its PostgreSQL', async () => {
      const npm = await spawnApi({ DATABASE_URL: undefined, DATA_DIR: dataDir }, ['npm', 'start']);
      try {
        await npm.ready(120_000);
        const apiPid = Number.parseInt(readFileSync(join(dataDir, 'instance.lock'), 'utf8'), 10);
        const postgresPid = postmasterPid();
        expect(apiPid).not.toBe(npm.child.pid);
        expect(isProcessAlive(apiPid) && isProcessAlive(postgresPid)).toBe(true);

        npm.child.kill('SIGTERM');
        await npm.exited;
        await until(() => !isProcessAlive(apiPid) && !isProcessAlive(postgresPid), 'the API and PostgreSQL to stop');
        expect(npm.output()).toMatch(/SIGTERM received: draining requests/);
        expect(npm.output()).toMatch(/Stopped/);
      } finally {
        npm.child.kill('SIGKILL');
      }
    });
  });
});
