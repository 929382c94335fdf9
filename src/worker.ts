import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { PinoNestLogger, createLogger } from './common/logging/logger';
import { ConfigError } from './config/config';
import { HttpMetrics } from './metrics/http-metrics';
import { prepareRuntime } from './runtime';
import { onShutdownSignal } from './shutdown';

/** Background workers in a process of their own: `npm run worker`. */
async function main(): Promise<void> {
  const runtime = await prepareRuntime('worker', (m) => console.error(m)); // stdout: JSON log lines only
  const logger = createLogger(runtime.config.logLevel);
  const context = await NestFactory.createApplicationContext(
    AppModule.register({ config: runtime.config, metrics: new HttpMetrics(), runWorkers: true }),
    { logger: new PinoNestLogger(logger) },
  );
  logger.info('Worker started');
  onShutdownSignal(async () => {
    await context.close();
    await runtime.release();
  });
}

main().catch((error: unknown) => {
  console.error(
    error instanceof ConfigError ? error.message : `Worker start-up failed: ${(error as Error)?.message ?? error}`,
  );
  process.exit(1);
});
