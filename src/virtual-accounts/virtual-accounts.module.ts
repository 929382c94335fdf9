import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { BANKING_PORT, BankingPort } from './banking/banking-port';
import { SandboxBank } from './banking/sandbox-bank';
import { DepositsController } from './deposits.controller';
import { DepositsRepository } from './deposits.repository';
import { DepositsService } from './deposits.service';
import { LedgerRepository } from './ledger.repository';
import { PayoutsRepository } from './payouts.repository';
import { PayoutsService } from './payouts.service';
import { VirtualAccountsController } from './virtual-accounts.controller';
import { VirtualAccountsService } from './virtual-accounts.service';

/** The payout port's adapters, chosen by PAYMENTS_PROCESSOR like the payment processor. */
const BANKS: Record<AppConfig['paymentsProcessor'], new () => BankingPort> = { sandbox: SandboxBank };

/** The double-entry ledger of virtual accounts, their deposits and payouts (spec 2.6, 4.5; API.md section 9). */
@Module({
  controllers: [VirtualAccountsController, DepositsController],
  providers: [
    LedgerRepository,
    DepositsRepository,
    PayoutsRepository,
    VirtualAccountsService,
    DepositsService,
    PayoutsService,
    {
      provide: BANKING_PORT,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new BANKS[config.paymentsProcessor](),
    },
  ],
  exports: [VirtualAccountsService, DepositsService, PayoutsService],
})
export class VirtualAccountsModule {}
