import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../src/app.module';
import { PinoNestLogger, createLogger } from '../src/common/logging/logger';
import { HttpMetrics } from '../src/metrics/http-metrics';
import { prepareRuntime } from '../src/runtime';
import type { CardToken } from '../src/transactions/processor/payment-processor';
import { TransactionsService } from '../src/transactions/transactions.service';

/**
 * The renewal benchmark's ceiling, as a process of its own like a renewal worker: the same
 * card-on-file charges through the transactions service (insert, processor, settlement) with
 * no subscription logic, `COUNT` of them, `CONCURRENCY` at a time (the renewal job's default).
 */
async function main(): Promise<void> {
  const runtime = await prepareRuntime('cli', () => undefined);
  const app = await NestFactory.createApplicationContext(
    AppModule.register({ config: runtime.config, metrics: new HttpMetrics(), runWorkers: false }),
    { logger: new PinoNestLogger(createLogger('warn')) },
  );
  const transactions = app.get(TransactionsService);
  const card = JSON.parse(process.env.BENCH_CARD!) as CardToken;
  const count = Number(process.env.BENCH_COUNT);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      await transactions.create(
        process.env.BENCH_SELLER!,
        {
          amount: '49.90',
          payment_type: 'credit',
          description: 'Subscription bench: plan, period 2',
          reference: process.env.BENCH_REFERENCE,
          customer: { name: 'Bench Subscriber', email: 'bench@example.com', document: '52998224725' },
        },
        'subscription',
        { cardOnFile: card },
      );
    }
  };
  await Promise.all(Array.from({ length: Number(process.env.BENCH_CONCURRENCY ?? 4) }, lane));
  await app.close();
  await runtime.release();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
