import { DynamicModule, Type } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import type { DestinationStream } from 'pino';
import { createApp } from '../../src/app.factory';
import { CredentialCache } from '../../src/auth/credential-cache';
import { AppConfig, readEnvironment, toAppConfig } from '../../src/config/config';
import { createTestDatabase, dropTestDatabase } from './database';
import { HttpClient } from './http';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-0123456789';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  http: HttpClient;
  baseUrl: string;
  databaseUrl: string;
  /** A direct connection to the app's database, for checking what was stored. */
  db: Client;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Use this database instead of a fresh one (several apps on one database). */
  databaseUrl?: string;
  env?: Record<string, string>;
  imports?: Array<Type | DynamicModule>;
  runWorkers?: boolean;
  logDestination?: DestinationStream;
}

/** Boots the whole application on a database of its own and listens on a free loopback port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const ownDatabase = !options.databaseUrl;
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const config = toAppConfig(
    readEnvironment({ NODE_ENV: 'test', LOG_LEVEL: 'silent', WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', ...options.env }),
    { databaseUrl, jwtSecret: TEST_JWT_SECRET },
  );
  const app = await createApp(config, {
    runWorkers: options.runWorkers ?? false,
    imports: options.imports,
    logDestination: options.logDestination,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const db = new Client({ connectionString: databaseUrl });
  db.on('error', () => undefined); // outage tests cut the connection on purpose
  await db.connect();
  return {
    db,
    app,
    config,
    baseUrl,
    databaseUrl,
    http: new HttpClient(baseUrl),
    async close() {
      await db.end();
      await app.close();
      if (ownDatabase) await dropTestDatabase(databaseUrl);
    },
  };
}

/**
 * A change made in SQL behind the app's back (not through its services, which drop what they
 * change from the app's caches at once): runs it, then waits until the app has heard of it by
 * its database notification (`payload`, see the notification triggers), as every API process
 * does within a second.
 */
export async function changeBehindTheApp(t: TestApp, sql: string, params: unknown[], payload: string): Promise<void> {
  const cache = t.app.get(CredentialCache);
  const heard = cache.notificationsHeard;
  await t.db.query(sql, params);
  const deadline = Date.now() + 5000;
  while (cache.listening && !cache.payloadsHeardSince(heard).includes(payload)) {
    if (Date.now() > deadline) throw new Error(`the app did not hear ${payload} after: ${sql}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
