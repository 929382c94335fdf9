import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessesRepository } from './accesses.repository';
import { Access } from './entities/access.entity';

/**
 * The access table (user, seller, permissions). Its repository is the one door through which
 * authorisation reads a user's access (AuthorizationModule) and the sellers area manages it.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Access])],
  providers: [AccessesRepository],
  exports: [AccessesRepository],
})
export class AccessesModule {}
