import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MailModule } from '../mail/mail.module';
import { SellersModule } from '../sellers/sellers.module';
import { CheckoutController } from './checkout.controller';
import { CheckoutService } from './checkout.service';
import { EventOrdersRepository } from './event-orders.repository';
import { TicketedEventsController } from './ticketed-events.controller';
import { TicketedEventsRepository } from './ticketed-events.repository';
import { TicketedEventsService } from './ticketed-events.service';

/**
 * Ticketed events and their public checkout (API.md section 10.1). It charges through the
 * transactions service: it imports the application's own registration of TransactionsModule
 * (the same object, so the same instance), and its settlement listener subscribes where the
 * transactions service notifies.
 */
@Module({})
export class EventsModule {
  static register(transactions: DynamicModule): DynamicModule {
    return {
      module: EventsModule,
      imports: [AuthModule, SellersModule, MailModule, transactions],
      controllers: [TicketedEventsController, CheckoutController],
      providers: [TicketedEventsRepository, EventOrdersRepository, TicketedEventsService, CheckoutService],
    };
  }
}
