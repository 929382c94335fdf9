import { DynamicModule, Global, Module } from '@nestjs/common';
import { JobQueue, RUN_WORKERS } from './job-queue.service';

@Global()
@Module({})
export class JobsModule {
  static register(runWorkers: boolean): DynamicModule {
    return {
      module: JobsModule,
      providers: [{ provide: RUN_WORKERS, useValue: runWorkers }, JobQueue],
      exports: [JobQueue, RUN_WORKERS],
    };
  }
}
