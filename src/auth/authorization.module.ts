import { Module } from '@nestjs/common';
import { AccessesModule } from '../sellers/accesses.module';
import { AuthorizationService } from './authorization.service';

/** The one place of authorisation decisions, over the access table's repository. */
@Module({ imports: [AccessesModule], providers: [AuthorizationService], exports: [AuthorizationService] })
export class AuthorizationModule {}
