import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthorizationModule } from '../auth/authorization.module';
import { UsersModule } from '../auth/users.module';
import { PlansModule } from '../plans/plans.module';
import { VirtualAccountsModule } from '../virtual-accounts/virtual-accounts.module';
import { AccessesModule } from './accesses.module';
import { AccessesService } from './accesses.service';
import { Seller } from './entities/seller.entity';
import { Subaccount } from './entities/subaccount.entity';
import { SellersController } from './sellers.controller';
import { SellersRepository } from './sellers.repository';
import { SellersService } from './sellers.service';

/** Sellers, their sub-accounts (unified accounts) and the access table. */
@Module({
  imports: [
    TypeOrmModule.forFeature([Seller, Subaccount]),
    AccessesModule,
    AuthorizationModule,
    UsersModule,
    PlansModule,
    VirtualAccountsModule,
  ],
  controllers: [SellersController],
  providers: [SellersRepository, SellersService, AccessesService],
  exports: [SellersService],
})
export class SellersModule {}
