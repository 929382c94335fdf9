import { GAUGE_READ_MS, HttpMetrics } from './http-metrics';

describe('HttpMetrics gauges', () => {
  it('reads NaN for a gauge that fails or does not answer in time, at once; the others are there', async () => {
    const metrics = new HttpMetrics();
    metrics.gauge('answers', 'A gauge that answers.', [], async () => [{ labels: {}, value: 7 }]);
    metrics.gauge('fails', 'A gauge whose reading fails.', [], () => Promise.reject(new Error('ECONNREFUSED')));
    metrics.gauge('silent', 'A gauge whose reading never ends.', [], () => new Promise(() => undefined));
    const started = Date.now();
    const text = await metrics.registry.metrics();
    expect(Date.now() - started).toBeLessThan(GAUGE_READ_MS + 1_000);
    expect(text).toMatch(/^answers 7$/m);
    expect(text).toMatch(/^fails nan$/im);
    expect(text).toMatch(/^silent nan$/im);
  });
});
