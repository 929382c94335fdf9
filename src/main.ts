import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp, stopApp } from './app.factory';
import { ConfigError, localBaseUrl } from './config/config';
import { listenError } from './config/listen-error';
import { prepareRuntime } from './runtime';
import { onShutdownSignal } from './shutdown';

/** HTTP entry point: `npm start`. */
async function main(): Promise<void> {
  const started = Date.now();
  // For the operator at the terminal, on stderr: stdout carries only the JSON log lines.
  const log = (message: string) => console.error(message);
  const runtime = await prepareRuntime('api', log);
  const { config } = runtime;
  let app;
  try {
    app = await createApp(config);
    await app.listen({ port: config.port, host: config.host }).catch((error: unknown) => {
      throw listenError(error, config.host, config.port);
    });
  } catch (error) {
    await app?.close().catch(() => undefined);
    await runtime.release();
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = localBaseUrl(config.host, port);
  log(`Seller Payments API ready in ${Date.now() - started} ms`);
  if (config.env === 'production' && config.paymentsProcessor === 'sandbox') {
    // The only processor built in is the sandbox: no real money moves, and its confirm routes let
    // a seller's own users mark their pix charges and deposits paid.
    new Logger('Startup').warn(
      'PAYMENTS_PROCESSOR=sandbox in production: charges and payouts are simulated, and ' +
        'POST /sandbox/transactions/{id}/confirm/ and /sandbox/deposits/{id}/confirm/ let sellers mark their own payments paid. ' +
        'Do not take real payments with it.',
    );
  }
  log(`  API:  ${base}/`);
  log(`  Docs: ${base}/docs`);

  onShutdownSignal(async (signal) => {
    log(`${signal} received: draining requests (at most ${config.shutdownTimeout} s)`);
    const unfinished = await stopApp(app, config.shutdownTimeout * 1000);
    if (unfinished > 0) log(`${unfinished} request(s) still running after ${config.shutdownTimeout} s were cut`);
    await runtime.release();
    log('Stopped');
  });
}

main().catch((error: unknown) => {
  console.error(
    error instanceof ConfigError ? error.message : `Start-up failed: ${(error as Error)?.message ?? error}`,
  );
  process.exit(1);
});
