import { ConfigError, localBaseUrl, readEnvironment } from './config';

describe('configuration', () => {
  it('has defaults that start a development instance', () => {
    const env = readEnvironment({});
    expect(env).toMatchObject({
      PORT: 3000,
      ACCESS_TOKEN_TTL: 86_400,
      REFRESH_TOKEN_TTL: 345_600,
      PAYMENTS_PROCESSOR: 'sandbox',
      WORKERS_IN_API: true,
      WEBHOOKS_ALLOW_PRIVATE_URLS: false,
      WEBHOOKS_ENDPOINT_CONCURRENCY: 8,
      WEBHOOKS_SELLER_CONCURRENCY: 16,
    });
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it('names the variable of an invalid value', () => {
    expect(() => readEnvironment({ PORT: 'abc' })).toThrow(ConfigError);
    expect(() => readEnvironment({ PORT: 'abc' })).toThrow(/PORT must be an integer between 0 and 65535 \(got "abc"\)/);
    expect(() => readEnvironment({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => readEnvironment({ WORKERS_IN_API: 'maybe' })).toThrow(/WORKERS_IN_API/);
    expect(() => readEnvironment({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => readEnvironment({ SMTP_URL: 'http://mail' })).toThrow(/SMTP_URL/);
    expect(() => readEnvironment({ SMTP_URL: 'smtp://mail:99999' })).toThrow(
      /SMTP_URL must be a valid URL \(host, and a port of 1 to 65535/,
    );
    expect(() => readEnvironment({ SHUTDOWN_TIMEOUT: '0' })).toThrow(
      /SHUTDOWN_TIMEOUT must be a whole number of seconds between 1 and 300/,
    );
    expect(() => readEnvironment({ DATABASE_QUERY_TIMEOUT: '2.5' })).toThrow(/DATABASE_QUERY_TIMEOUT/);
    expect(() => readEnvironment({ DATABASE_WAIT_TIMEOUT: 'soon' })).toThrow(/DATABASE_WAIT_TIMEOUT/);
    expect(() => readEnvironment({ WEBHOOKS_SELLER_CONCURRENCY: '0' })).toThrow(
      /WEBHOOKS_SELLER_CONCURRENCY must be an integer between 1 and 1000/,
    );
  });

  it('requires JWT_SECRET in production, without echoing secrets', () => {
    expect(() => readEnvironment({ NODE_ENV: 'production' })).toThrow(
      /JWT_SECRET is required when NODE_ENV=production/,
    );
    expect(() => readEnvironment({ JWT_SECRET: 'short-secret' })).toThrow(/JWT_SECRET must be at least 32/);
    expect(() => readEnvironment({ JWT_SECRET: ' '.repeat(40) })).toThrow(
      /JWT_SECRET must be at least 32 characters other than spaces/,
    );
    expect(() => readEnvironment({ JWT_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it('takes TRUST_PROXY as a flag or as the proxies whose X-Forwarded-For is believed', () => {
    expect(readEnvironment({}).TRUST_PROXY).toBe(false);
    expect(readEnvironment({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(readEnvironment({ TRUST_PROXY: '0' }).TRUST_PROXY).toBe(false);
    expect(readEnvironment({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,fd00::/8' }).TRUST_PROXY).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'fd00::/8',
    ]);
    for (const bad of [
      'maybe',
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0.1/8/9',
      '10.0.0.0/x',
      'true,10.0.0.1',
      '10.0.0.1,',
    ]) {
      expect(() => readEnvironment({ TRUST_PROXY: bad })).toThrow(
        /TRUST_PROXY must be "true", "false" or a comma-separated list of proxy addresses or CIDR blocks/,
      );
    }
  });

  it('refuses a HOST, SMTP_URL or MAIL_FROM that cannot work, naming it', () => {
    for (const host of ['0.0.0.0', '::', '127.0.0.1', 'localhost', 'api.internal', 'my-host']) {
      expect(readEnvironment({ HOST: host }).HOST).toBe(host);
    }
    for (const host of ['not_a_host', '999.1.1.1', '1.2.3', '-bad', 'a..b']) {
      expect(() => readEnvironment({ HOST: host })).toThrow(/HOST must be an IP address or a host name/);
    }
    expect(() => readEnvironment({ SMTP_URL: 'smtp://' })).toThrow(/SMTP_URL must name the SMTP server/);
    expect(readEnvironment({ SMTP_URL: 'smtps://user:pw@mail.example:465' }).SMTP_URL).toBeDefined();
    for (const from of [
      'no-reply@payments.example',
      'dev@localhost',
      'Payments <no-reply@payments.example>',
      '"Payments, Inc" <no-reply@payments.example>',
    ]) {
      expect(readEnvironment({ MAIL_FROM: from }).MAIL_FROM).toBe(from);
    }
    for (const from of [
      'notanemail',
      'a b@c.d',
      'Payments <>',
      'Payments, Inc <no-reply@payments.example>',
      'a@b.c, d@e.f',
    ]) {
      expect(() => readEnvironment({ MAIL_FROM: from })).toThrow(/MAIL_FROM must be an e-mail address/);
    }
  });

  it('reports every problem at once', () => {
    try {
      readEnvironment({ PORT: '-1', ACCESS_TOKEN_TTL: 'x' });
      throw new Error('accepted');
    } catch (error) {
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });

  it('treats empty strings as unset, except DATABASE_URL: blank there is a mistake, not the embedded database', () => {
    expect(readEnvironment({ PORT: '', SMTP_URL: '' }).PORT).toBe(3000);
    for (const blank of ['', ' ']) {
      expect(() => readEnvironment({ DATABASE_URL: blank })).toThrow(
        /DATABASE_URL is empty: set it to a postgres:\/\/ URL, or unset it for the embedded PostgreSQL/,
      );
    }
  });

  it('takes numbers in decimal digits only: blanks, hexadecimal, exponents and signs are refused', () => {
    for (const bad of [' ', '0x10', '1e3', '+80', '-1', '8.0', ' 80']) {
      expect(() => readEnvironment({ PORT: bad })).toThrow(/PORT must be an integer between 0 and 65535/);
    }
    expect(() => readEnvironment({ CREDENTIAL_CACHE_SECONDS: ' ' })).toThrow(/CREDENTIAL_CACHE_SECONDS/);
    expect(() => readEnvironment({ WEBHOOKS_RETRY_SCALE: '0x1' })).toThrow(/WEBHOOKS_RETRY_SCALE/);
    expect(readEnvironment({ WEBHOOKS_RETRY_SCALE: String(1e-7) }).WEBHOOKS_RETRY_SCALE).toBe(1e-7);
    expect(readEnvironment({ PORT: '8080', WEBHOOKS_RETRY_SCALE: '0.5' })).toMatchObject({
      PORT: 8080,
      WEBHOOKS_RETRY_SCALE: 0.5,
    });
  });

  it('gives the local address of the service for its HOST and PORT', () => {
    expect(localBaseUrl('0.0.0.0', 3917)).toBe('http://localhost:3917');
    expect(localBaseUrl('::', 3000)).toBe('http://localhost:3000');
    expect(localBaseUrl('127.0.0.1', 8080)).toBe('http://127.0.0.1:8080');
    expect(localBaseUrl('::1', 8080)).toBe('http://[::1]:8080');
  });
});
