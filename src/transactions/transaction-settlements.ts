import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { TransactionResponseDto } from './dto/transaction.dto';

/**
 * Something that must change together with a transaction's status (an event order completed
 * by its pix payment, a subscription activated by its first charge). Called inside the
 * database transaction that changed the status, after the change, so both commit or neither.
 */
export interface TransactionSettlementListener {
  /** The transaction as the API shows it after the change; `previous` is its status before. */
  onTransactionSettled(manager: EntityManager, transaction: TransactionResponseDto, previous: string): Promise<void>;
}

/** The listeners of transaction status changes; areas built on charges subscribe at start-up. */
@Injectable()
export class TransactionSettlements {
  private readonly listeners: TransactionSettlementListener[] = [];

  subscribe(listener: TransactionSettlementListener): void {
    this.listeners.push(listener);
  }

  async notify(manager: EntityManager, transaction: TransactionResponseDto, previous: string): Promise<void> {
    for (const listener of this.listeners) await listener.onTransactionSettled(manager, transaction, previous);
  }
}
