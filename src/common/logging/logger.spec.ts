import { LogCapture } from '../../../test/support/log-capture';
import { createLogger } from './logger';

describe('log redaction', () => {
  it('never writes credentials, secrets or card data', () => {
    const capture = new LogCapture();
    const logger = createLogger('info', capture);
    logger.info(
      {
        req: { headers: { authorization: 'Bearer eyJhbGciOi.secret.sig', 'idempotency-key': 'k1' } },
        body: { email: 'a@b.c', password: 'hunter22', card: { number: '4111111111111111', cvv: '123' } },
        token: '123456',
        key: '0b8e1f5e-6b1c-4c1e-9f5a-2b7f3c4d5e6f',
        refresh: 'eyJ.refresh.token',
        secret: 'whsec_abc',
      },
      'something happened',
    );
    const text = capture.text;
    for (const secret of [
      'eyJhbGciOi',
      'hunter22',
      '4111111111111111',
      '"123"',
      '123456',
      '0b8e1f5e',
      'eyJ.refresh',
      'whsec_abc',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('a@b.c');
    expect(text).toContain('[REDACTED]');
  });

  it('logs a failed SQL statement without its text or parameters', () => {
    const capture = new LogCapture();
    const logger = createLogger('info', capture);
    const error = Object.assign(new Error('duplicate key'), {
      query: 'INSERT INTO users (password_hash) VALUES ($1)',
      parameters: ['$argon2id$secret-hash'],
      driverError: { detail: 'Key (email)=(a@b.c) exists' },
      code: '23505',
    });
    logger.error({ err: error }, 'Unhandled error');
    const text = capture.text;
    expect(text).toContain('duplicate key');
    expect(text).toContain('23505');
    expect(text).not.toContain('secret-hash');
    expect(text).not.toContain('INSERT INTO');
    expect(text).not.toContain('a@b.c');
  });
});
