import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MailModule } from '../mail/mail.module';
import { SellersModule } from '../sellers/sellers.module';
import { SubscriptionBilling } from './subscription-billing.service';
import { SubscriptionRenewals } from './subscription-renewals.service';
import { SubscribersController, SubscriptionPlansController } from './subscriptions.controller';
import { SubscriptionsRepository } from './subscriptions.repository';
import { SubscriptionsService } from './subscriptions.service';

/**
 * Subscriptions (API.md 10.2): plans, public subscribe, card on file, renewals and dunning.
 * Charges go through the application's one TransactionsModule, passed in so that it is not
 * instantiated a second time.
 */
@Module({})
export class SubscriptionsModule {
  static register(transactions: DynamicModule): DynamicModule {
    return {
      module: SubscriptionsModule,
      imports: [transactions, AuthModule, SellersModule, MailModule],
      controllers: [SubscriptionPlansController, SubscribersController],
      providers: [SubscriptionsRepository, SubscriptionBilling, SubscriptionsService, SubscriptionRenewals],
      exports: [SubscriptionRenewals],
    };
  }
}
