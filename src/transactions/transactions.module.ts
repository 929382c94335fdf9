import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import type { AppConfig } from '../config/config';
import { SellersModule } from '../sellers/sellers.module';
import { SplitModule } from '../split/split.module';
import { SplitRule } from './entities/split-rule.entity';
import { Transaction } from './entities/transaction.entity';
import { PAYMENT_PROCESSOR } from './processor/payment-processor';
import { SandboxCardTokensRepository } from './processor/sandbox-card-tokens.repository';
import { SandboxChargesRepository } from './processor/sandbox-charges.repository';
import { SandboxProcessor } from './processor/sandbox.processor';
import { SandboxController } from './sandbox.controller';
import { TransactionsController } from './transactions.controller';
import { TransactionsRepository } from './transactions.repository';
import { TransactionSettlements } from './transaction-settlements';
import { TransactionsService } from './transactions.service';

const PROCESSORS = { sandbox: SandboxProcessor } as const;

/** Unified transactions behind the payment processor port chosen by PAYMENTS_PROCESSOR. */
@Module({})
export class TransactionsModule {
  static register(config: Pick<AppConfig, 'paymentsProcessor'>): DynamicModule {
    const sandbox = config.paymentsProcessor === 'sandbox';
    return {
      module: TransactionsModule,
      imports: [TypeOrmModule.forFeature([Transaction, SplitRule]), AuthModule, SellersModule, SplitModule],
      controllers: [TransactionsController, ...(sandbox ? [SandboxController] : [])],
      providers: [
        TransactionsRepository,
        TransactionsService,
        TransactionSettlements,
        ...(sandbox ? [SandboxChargesRepository, SandboxCardTokensRepository] : []),
        { provide: PAYMENT_PROCESSOR, useClass: PROCESSORS[config.paymentsProcessor] },
      ],
      exports: [TransactionsService, TransactionSettlements],
    };
  }
}
