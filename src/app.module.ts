import { DynamicModule, Global, Module, Type } from '@nestjs/common';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { CredentialCacheModule } from './auth/credential-cache.module';
import { CommonModule } from './common/common.module';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { APP_CONFIG, AppConfig } from './config/config';
import { DatabaseModule } from './database/database.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { JobsModule } from './jobs/jobs.module';
import { HttpMetrics } from './metrics/http-metrics';
import { MetricsController } from './metrics/metrics.controller';
import { MetricsRepository } from './metrics/metrics.repository';
import { OperationsMetrics } from './metrics/operations-metrics';
import { PlansModule } from './plans/plans.module';
import { SellersModule } from './sellers/sellers.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { TransactionsModule } from './transactions/transactions.module';
import { SandboxDepositsModule } from './virtual-accounts/sandbox-deposits.module';
import { WebhooksModule } from './webhooks/webhooks.module';

export interface AppModuleOptions {
  config: AppConfig;
  metrics: HttpMetrics;
  /** Whether this process runs the background workers (API with WORKERS_IN_API, or the worker). */
  runWorkers: boolean;
  /** Extra modules, for tests. */
  imports?: Array<Type | DynamicModule>;
}

@Global()
@Module({})
class ConfigHolderModule {}

@Module({})
export class AppModule {
  static register(options: AppModuleOptions): DynamicModule {
    // One registration, imported by the areas that charge through it (one instance).
    const transactions = TransactionsModule.register(options.config);
    return {
      module: AppModule,
      imports: [
        {
          module: ConfigHolderModule,
          providers: [
            { provide: APP_CONFIG, useValue: options.config },
            { provide: HttpMetrics, useValue: options.metrics },
          ],
          exports: [APP_CONFIG, HttpMetrics],
        },
        DatabaseModule,
        JobsModule.register(options.runWorkers),
        CommonModule,
        CredentialCacheModule,
        AuthModule,
        RateLimitModule,
        SellersModule,
        ApiKeysModule,
        PlansModule,
        transactions,
        SubscriptionsModule.register(transactions),
        ...(options.config.paymentsProcessor === 'sandbox' ? [SandboxDepositsModule] : []),
        EventsModule.register(transactions),
        WebhooksModule,
        HealthModule,
        AuditModule,
        ...(options.imports ?? []),
      ],
      controllers: [MetricsController],
      providers: [MetricsRepository, OperationsMetrics],
    };
  }
}
