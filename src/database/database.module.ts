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

/**
 * The TypeORM connection pool, and the shared connections of short statements by key (SharedConnections). The
 * schema is owned by migrations (run before the application starts), never by `synchronize`.
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
      useFactory: (config: AppConfig) =>
        new SharedConnections({
          ...connectionSettings(config),
          connectionString: config.databaseUrl,
          application_name: APPLICATION_NAME,
        } satisfies ClientConfig),
    },
  ],
  exports: [SharedConnections],
})
export class DatabaseModule {}
