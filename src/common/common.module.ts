import { Global, Module, OnModuleInit } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { JobQueue } from '../jobs/job-queue.service';
import { AllExceptionsFilter } from './errors/all-exceptions.filter';
import { IdempotencyInterceptor } from './idempotency/idempotency.interceptor';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { IdempotencyService } from './idempotency/idempotency.service';
import { createValidationPipe } from './validation/validation.pipe';

/** The global building blocks: error filter, validation pipe and Idempotency-Key handling. */
@Global()
@Module({
  providers: [
    IdempotencyRepository,
    IdempotencyService,
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
  ],
  exports: [IdempotencyService],
})
export class CommonModule implements OnModuleInit {
  constructor(
    private readonly jobs: JobQueue,
    private readonly idempotency: IdempotencyService,
  ) {}

  onModuleInit(): void {
    this.jobs.define({
      name: 'maintenance.purge-idempotency-keys',
      schedule: '17 * * * *',
      handler: async () => {
        await this.idempotency.purgeExpired();
      },
    });
  }
}
