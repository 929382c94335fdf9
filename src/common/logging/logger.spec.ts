import { Writable } from 'node:stream';
import { createLogger } from './logger';

describe('log redaction', () => {
  it('never writes credentials, secrets or card data', () => {
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _e, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
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
    const text = lines.join('');
    for (const secret of ['eyJhbGciOi', 'hunter22', '4111111111111111', '"123"', '123456', '0b8e1f5e', 'eyJ.refresh', 'whsec_abc']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('a@b.c');
    expect(text).toContain('[REDACTED]');
  });
});
