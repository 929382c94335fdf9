import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { ClientConfig } from 'pg';
import { APP_CONFIG, AppConfig } from '../config/config';
import { CONNECT_TIMEOUT_MS, poolOptions } from './pg-options';
import { PipelinedClient } from './pipelined-client';
import { SharedConnections } from './shared-connections';

const APPLICATION_NAME = 'payments-api';

/**
 * The settings of every connection of the pool and of the shared connections. Short locks, bounded
 * statements and connections, keepalive: a stuck or unreachable database answers 503 within
 * seconds instead of piling requests up. Pipelined connections: see PipelinedClient.
 */
function connectionSettings(config: AppConfig) {
  return {
    ...poolOptions({ queryTimeoutSeconds: config.databaseQueryTimeout }),
    Client: PipelinedClient,
    pipeline: true,
    preparedStatements: config.databasePreparedStatements,
  };
}

function sharedSettings(config: AppConfig): ClientConfig {
  return { ...connectionSettings(config), connectionString: config.databaseUrl, application_name: APPLICATION_NAME };
}

/**
 * Shared connections (SharedConnections) for one-row counter updates whose loss in a crash is
 * harmless: the rate-limit counters, which every login and public checkout writes. Their commits
 * do not wait for the disk (`synchronous_commit=off`: a crash may forget the last fraction of a
 * second of hits), so a write on them is as quick as a read, and they are apart from the
 * connections of the reads, which a write never holds up.
 */
export const COUNTER_CONNECTIONS = Symbol('COUNTER_CONNECTIONS');

/**
 * The TypeORM connection pool, the shared connections of short reads by key (SharedConnections)
 * and those of counters (COUNTER_CONNECTIONS). The schema is owned by migrations (run before the
 * application starts), never by `synchronize`.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        type: 'postgres' as const,
        url: config.databaseUrl,
        autoLoadEntities: true,
        synchronize: false,
        migrationsRun: false,
        logging: false,
        applicationName: APPLICATION_NAME,
        connectTimeoutMS: CONNECT_TIMEOUT_MS,
        // Fail fast at start-up when the database is absent; at run time the pool reconnects.
        retryAttempts: 0,
        extra: { ...connectionSettings(config), max: config.databasePoolSize },
      }),
    }),
  ],
  providers: [
    {
      provide: SharedConnections,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new SharedConnections(sharedSettings(config)),
    },
    {
      provide: COUNTER_CONNECTIONS,
      inject: [APP_CONFIG],
      // Their commits do not wait for the disk: see COUNTER_CONNECTIONS.
      useFactory: (config: AppConfig) =>
        new SharedConnections({ ...sharedSettings(config), options: '-c synchronous_commit=off' }),
    },
  ],
  exports: [SharedConnections, COUNTER_CONNECTIONS],
})
export class DatabaseModule {}
