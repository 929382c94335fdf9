import { Module } from '@nestjs/common';
import { LedgerRepository } from './ledger.repository';
import { VirtualAccountsController } from './virtual-accounts.controller';
import { VirtualAccountsService } from './virtual-accounts.service';

/** The double-entry ledger of virtual accounts (spec 2.6, 4.5; API.md section 9). */
@Module({
  controllers: [VirtualAccountsController],
  providers: [LedgerRepository, VirtualAccountsService],
  exports: [VirtualAccountsService],
})
export class VirtualAccountsModule {}
