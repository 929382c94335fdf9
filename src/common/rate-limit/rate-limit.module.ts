import { Module, OnModuleInit } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { JobQueue } from '../../jobs/job-queue.service';
import { PgThrottlerStorage } from './pg-throttler.storage';
import { rateLimitThrottlers } from './rate-limit';

@Module({ providers: [PgThrottlerStorage], exports: [PgThrottlerStorage] })
class RateLimitStorageModule {}

/** Named rate limits (`@RateLimit(name)` on a route binds the guard), counted in PostgreSQL. */
@Module({
  imports: [
    RateLimitStorageModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [PgThrottlerStorage],
      useFactory: (storage: PgThrottlerStorage) => ({ throttlers: rateLimitThrottlers(), storage }),
    }),
  ],
})
export class RateLimitModule implements OnModuleInit {
  constructor(
    private readonly jobs: JobQueue,
    private readonly storage: PgThrottlerStorage,
  ) {}

  onModuleInit(): void {
    this.jobs.define({
      name: 'maintenance.purge-rate-limits',
      schedule: '*/10 * * * *',
      handler: async () => {
        await this.storage.purgeExpired();
      },
    });
  }
}
