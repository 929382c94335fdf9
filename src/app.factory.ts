import { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { FAST_JSON_DTOS, FastJsonSerializers } from './common/http/fast-json';
import { RequestDrain } from './common/http/drain';
import { createFastifyAdapter } from './common/http/fastify-setup';
import { PinoNestLogger, createLogger } from './common/logging/logger';
import { AppConfig } from './config/config';
import { HttpMetrics } from './metrics/http-metrics';
import { buildOpenApiDocument, mountOpenApi } from './openapi/openapi';

export interface CreateAppOptions {
  runWorkers?: boolean;
  logDestination?: DestinationStream;
  imports?: Array<Type | DynamicModule>;
  /** Build the module graph without connecting to anything (OpenAPI generation). */
  preview?: boolean;
}

/** Builds the HTTP application, initialised but not listening. Used by main, tests and tools. */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const logger = createLogger(config.logLevel, options.logDestination);
  const metrics = new HttpMetrics();
  const fastJson = new FastJsonSerializers();
  const drain = new RequestDrain();
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({
      config,
      metrics,
      runWorkers: options.runWorkers ?? config.workersInApi,
      imports: options.imports,
    }),
    createFastifyAdapter({ logger, metrics, drain, trustProxy: config.trustProxy, fastJson }),
    { bodyParser: false, logger: new PinoNestLogger(logger), abortOnError: false, preview: options.preview },
  );
  drains.set(app, drain);
  if (!options.preview) {
    const document = buildOpenApiDocument(app);
    // Tests check every fast-serialised body against JSON.stringify's.
    fastJson.load(document.components as Record<string, unknown>, [...FAST_JSON_DTOS], {
      verify: config.env === 'test',
    });
    mountOpenApi(app, document);
    await app.init();
  }
  return app;
}

const drains = new WeakMap<NestFastifyApplication, RequestDrain>();

/**
 * Stops a listening application gracefully: drains HTTP (see RequestDrain; running requests
 * get at most `timeoutMs`), then closes the rest (job queue, database pool). Resolves with the
 * number of requests that were still running when the time ran out.
 */
export async function stopApp(app: NestFastifyApplication, timeoutMs: number): Promise<number> {
  const unfinished = (await drains.get(app)?.drain(app.getHttpServer(), timeoutMs)) ?? 0;
  await app.close();
  return unfinished;
}
