import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { User } from './entities/user.entity';
import { UserDirectory } from './user-directory.service';
import { UsersRepository } from './users.repository';

/**
 * The user records. Other areas find users through UserDirectory; the repository is for the
 * authentication and users admin code of AuthModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([User])],
  providers: [UsersRepository, UserDirectory],
  exports: [UsersRepository, UserDirectory],
})
export class UsersModule {}
