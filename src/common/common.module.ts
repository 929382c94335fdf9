import { Global, Module, OnModuleInit } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { JobQueue } from '../jobs/job-queue.service';
import { AllExceptionsFilter } from './errors/all-exceptions.filter';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { IdempotencyService } from './idempotency/idempotency.service';
import { createValidationPipe } from './validation/validation.pipe';

/** The global building blocks: error filter, validation pipe and Idempotency-Key handling (see @Idempotent). */
@Global()
@Module({
  providers: [
    IdempotencyRepository,
    IdempotencyService,
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
  ],
  // The interceptor is bound by @Idempotent() in each controller's module, which needs these.
  exports: [IdempotencyService, IdempotencyRepository],
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
