import { decideOutcome, describeFailure, RETRY_SCHEDULE_MS, retryAfterMs } from './delivery-policy';

const now = Date.parse('2026-11-21T12:00:00.000Z');
const at = { scale: 1, now };

describe('webhook delivery policy', () => {
  it('succeeds on every 2xx and only on 2xx', () => {
    for (const status of [200, 201, 202, 204, 299]) {
      expect(decideOutcome({ kind: 'response', status }, 0, at)).toEqual({ status: 'succeeded' });
    }
    for (const status of [100, 301, 302, 304, 400, 404, 500]) {
      expect(decideOutcome({ kind: 'response', status }, 0, at).status).toBe('pending');
    }
  });

  it('puts a failed manual attempt back at the automatic attempt it put aside: same step, even the last', () => {
    const resumeAt = new Date(now + 3_600_000);
    const manual = { ...at, resumeAt };
    for (const step of [0, 3, RETRY_SCHEDULE_MS.length - 1]) {
      expect(decideOutcome({ kind: 'response', status: 500 }, step, manual)).toEqual({
        status: 'pending',
        delayMs: 3_600_000,
        scheduleStep: step,
      });
    }
    // Later when the answer asks for it; success and 410 are final as for any attempt.
    expect(
      decideOutcome({ kind: 'response', status: 503, retryAfter: '1800' }, 3, {
        ...at,
        resumeAt: new Date(now + 600_000),
      }),
    ).toMatchObject({
      delayMs: 1_800_000,
      scheduleStep: 3,
    });
    expect(decideOutcome({ kind: 'response', status: 204 }, 3, manual)).toEqual({ status: 'succeeded' });
    expect(decideOutcome({ kind: 'response', status: 410 }, 3, manual)).toEqual({
      status: 'failed',
      disableEndpoint: true,
    });
    // An automatic attempt already due when it was put aside: the manual attempt stands for it.
    expect(decideOutcome({ kind: 'response', status: 500 }, 3, { ...at, resumeAt: new Date(now - 1) })).toEqual({
      status: 'pending',
      delayMs: 0,
      scheduleStep: 3,
    });
  });

  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h, then fails', () => {
    const delays: number[] = [];
    let step = 0;
    for (;;) {
      const outcome = decideOutcome({ kind: 'response', status: 500 }, step, at);
      if (outcome.status !== 'pending') {
        expect(outcome).toEqual({ status: 'failed', disableEndpoint: false });
        break;
      }
      delays.push(outcome.delayMs);
      step = outcome.scheduleStep;
    }
    expect(delays.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(delays.reduce((a, b) => a + b, 0) / 3_600_000).toBeCloseTo(75.58, 1); // about 3 days
  });

  it('scales the schedule for tests', () => {
    expect(decideOutcome({ kind: 'error', message: 'timeout' }, 1, { scale: 0.001, now })).toEqual({
      status: 'pending',
      delayMs: 300,
      scheduleStep: 2,
    });
  });

  it('treats connection errors like failures', () => {
    expect(decideOutcome({ kind: 'error', message: 'ECONNRESET' }, 0, at)).toEqual({
      status: 'pending',
      delayMs: RETRY_SCHEDULE_MS[0],
      scheduleStep: 1,
    });
  });

  it('disables the endpoint on 410', () => {
    expect(decideOutcome({ kind: 'response', status: 410 }, 0, at)).toEqual({
      status: 'failed',
      disableEndpoint: true,
    });
  });

  it('never retries sooner than the schedule, whatever Retry-After asks (a zero or past one would spend the attempts at once)', () => {
    for (const retryAfter of ['0', '1', 'Wed, 21 Oct 2015 07:28:00 GMT']) {
      expect(decideOutcome({ kind: 'response', status: 503, retryAfter }, 0, at)).toMatchObject({
        delayMs: RETRY_SCHEDULE_MS[0],
      });
      expect(decideOutcome({ kind: 'response', status: 429, retryAfter }, 3, at)).toMatchObject({
        delayMs: RETRY_SCHEDULE_MS[3],
      });
    }
    // Past the cap, the schedule alone decides: 2 h is longer than any honoured Retry-After.
    expect(decideOutcome({ kind: 'response', status: 429, retryAfter: '86400' }, 3, at)).toMatchObject({
      delayMs: RETRY_SCHEDULE_MS[3],
    });
  });

  it('honours Retry-After on 429 and 503, capped at one hour, and ignores it elsewhere', () => {
    expect(decideOutcome({ kind: 'response', status: 429, retryAfter: '120' }, 0, at)).toMatchObject({
      delayMs: 120_000,
    });
    expect(decideOutcome({ kind: 'response', status: 503, retryAfter: '86400' }, 0, at)).toMatchObject({
      delayMs: 3_600_000,
    });
    expect(decideOutcome({ kind: 'response', status: 500, retryAfter: '120' }, 0, at)).toMatchObject({
      delayMs: 5_000,
    });
    expect(decideOutcome({ kind: 'response', status: 429, retryAfter: 'soon' }, 1, at)).toMatchObject({
      delayMs: 300_000,
    });
    expect(decideOutcome({ kind: 'response', status: 429, retryAfter: '7' }, 9, at)).toEqual({
      status: 'failed',
      disableEndpoint: false,
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('30', now)).toBe(30_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Sat, 21 Nov 2026 12:02:00 GMT', now)).toBe(120_000);
    expect(retryAfterMs('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('-5', now)).toBeNull();
    expect(retryAfterMs('1.5', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });

  it('describes failures for last_error', () => {
    expect(describeFailure({ kind: 'response', status: 301 })).toBe('HTTP 301: redirects are not followed');
    expect(describeFailure({ kind: 'response', status: 500 })).toBe('HTTP 500');
    expect(describeFailure({ kind: 'response', status: 204 })).toBeNull();
    expect(describeFailure({ kind: 'error', message: 'Timed out after 15 s' })).toBe('Timed out after 15 s');
  });
});
