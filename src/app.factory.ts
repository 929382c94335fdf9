import { DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { FAST_JSON_DTOS, FastJsonSerializers } from './common/http/fast-json';
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
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({
      config,
      metrics,
      runWorkers: options.runWorkers ?? config.workersInApi,
      imports: options.imports,
    }),
    createFastifyAdapter({ logger, metrics, trustProxy: config.trustProxy, fastJson }),
    { bodyParser: false, logger: new PinoNestLogger(logger), abortOnError: false, preview: options.preview },
  );
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
