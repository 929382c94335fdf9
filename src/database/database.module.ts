import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { CONNECT_TIMEOUT_MS, poolOptions } from './pg-options';
import { PipelinedClient } from './pipelined-client';

/**
 * The TypeORM connection pool. The schema is owned by migrations (run before the
 * application starts), never by `synchronize`.
 */
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
        applicationName: 'payments-api',
        connectTimeoutMS: CONNECT_TIMEOUT_MS,
        // Fail fast at start-up when the database is absent; at run time the pool reconnects.
        retryAttempts: 0,
        // Short locks, bounded statements and connections, keepalive: a stuck or unreachable
        // database answers 503 within seconds instead of piling requests up.
        // Pipelined connections: see PipelinedClient.
        extra: {
          ...poolOptions({ queryTimeoutSeconds: config.databaseQueryTimeout }),
          Client: PipelinedClient,
          pipeline: true,
          preparedStatements: config.databasePreparedStatements,
          max: config.databasePoolSize,
        },
      }),
    }),
  ],
})
export class DatabaseModule {}
