import { Global, Module } from '@nestjs/common';
import { AccessesModule } from '../sellers/accesses.module';
import { AuthorizationService } from './authorization.service';

/**
 * The one place of authorisation decisions, over the access table's repository. Global: the
 * Idempotency-Key interceptor, bound in every area's module, checks replays with it.
 */
@Global()
@Module({ imports: [AccessesModule], providers: [AuthorizationService], exports: [AuthorizationService] })
export class AuthorizationModule {}
