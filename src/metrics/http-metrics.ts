import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The longest a scrape waits for one gauge's reading. */
export const GAUGE_READ_MS = 2_000;

/**
 * The application's metrics, in a registry of its own: requests (count and latency by route and
 * status), business events counted as they are written (transactions by payment type and status,
 * declines, voids, ledger postings, idempotency conflicts), and gauges read at scrape time
 * (registered with `gauge`: outbox backlog, job queues, database pool).
 */
export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly duration: Histogram<'method' | 'route' | 'status'>;
  private readonly transactions = this.counter(
    'payments_transactions_total',
    'Transactions written with a status (a charge when created, then each change of status), by payment type and status.',
    ['payment_type', 'status'],
  );
  private readonly declines = this.counter(
    'payments_declines_total',
    'Charges declined, by payment type and decline reason.',
    ['payment_type', 'reason'],
  );
  private readonly voids = this.counter('payments_voids_total', 'Transactions voided, by payment type.', [
    'payment_type',
  ]);
  private readonly postings = this.counter(
    'ledger_postings_total',
    'Ledger movements posted (journal entries), by kind.',
    ['kind'],
  );
  private readonly idempotencyConflicts = this.counter(
    'idempotency_conflicts_total',
    'Requests refused for their Idempotency-Key (in use: 409, reused with another request: 422), by error code.',
    ['code'],
  );

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  }

  transactionWritten(paymentType: string, status: string, declineReason?: string | null): void {
    this.transactions.inc({ payment_type: paymentType, status });
    if (status === 'declined') this.declines.inc({ payment_type: paymentType, reason: declineReason ?? 'unknown' });
    if (status === 'voided') this.voids.inc({ payment_type: paymentType });
  }

  ledgerPosted(kind: string): void {
    this.postings.inc({ kind });
  }

  /** Called with the code of every error answer the global filter writes. */
  errorAnswered(code: string): void {
    if (code.startsWith('idempotency_key_')) this.idempotencyConflicts.inc({ code });
  }

  /**
   * A gauge whose values are read when /metrics is scraped. `read` returns the current values
   * with their labels; when it fails (database unreachable), or has not answered within
   * GAUGE_READ_MS (a silent database: a scrape must not outlast Prometheus' timeout, and the
   * process metrics matter most then), the gauge is left out of that scrape (one without labels
   * reads NaN).
   */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    read: () => Promise<Array<{ labels: Partial<Record<L, string>>; value: number }>>,
  ): void {
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('late')), GAUGE_READ_MS).unref();
        });
        try {
          for (const { labels, value } of await Promise.race([read(), late])) this.set(labels, value);
        } catch {
          // No value this time. A gauge without labels cannot be left out (reset makes it 0, which
          // would read as an empty outbox during an outage): NaN, a gap on a graph.
          if (labelNames.length === 0) this.set(NaN);
        } finally {
          clearTimeout(timer);
        }
      },
    });
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter<L>({ name, help, labelNames, registers: [this.registry] });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
