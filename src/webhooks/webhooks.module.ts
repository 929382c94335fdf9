import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module';
import { SellersModule } from '../sellers/sellers.module';
import { OutboxSignal } from './outbox-signal';
import { systemResolver } from './webhook-transport';
import { WebhookWorker } from './webhook-worker';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WEBHOOK_RESOLVER, WebhooksService } from './webhooks.service';

@Module({
  imports: [MailModule, SellersModule],
  controllers: [WebhooksController],
  providers: [
    WebhooksRepository,
    WebhooksService,
    WebhookWorker,
    OutboxSignal,
    { provide: WEBHOOK_RESOLVER, useValue: systemResolver },
  ],
  exports: [WebhookWorker],
})
export class WebhooksModule {}
