import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';

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
        connectTimeoutMS: 5000,
        // Fail fast at start-up when the database is absent; at run time the pool reconnects.
        retryAttempts: 0,
        extra: {
          max: config.databasePoolSize,
          // Short locks and bounded statements: a stuck request answers 503 instead of piling up.
          options: '-c lock_timeout=5s -c statement_timeout=30s -c idle_in_transaction_session_timeout=60s',
        },
      }),
    }),
  ],
})
export class DatabaseModule {}
