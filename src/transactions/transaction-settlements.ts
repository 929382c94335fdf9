import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { TransactionResponseDto } from './dto/transaction.dto';

/**
 * Something that must change together with a transaction's status (an event order completed
 * by its pix payment, a subscription activated by its first charge). Called inside the
 * database transaction that changed the status, after the change and its events, so both commit
 * or neither, and a webhook consumer hears of the transaction's change before of what follows
 * from it (`transaction.approved`, then `checkout.completed`). A listener's own writes then come
 * after the transaction's: a checkout's move of a hot seat row goes as late as it can, with the COMMIT.
 */
export interface TransactionSettlementListener {
  /** The transaction as the API shows it after the change; `previous` is its status before. */
  onTransactionSettled(manager: EntityManager, transaction: TransactionResponseDto, previous: string): Promise<void>;
}

/**
 * Thrown by a listener that cannot record a charge's outcome (a subscription charge with no
 * record of its own, or one whose period was charged again meanwhile): the settlement is rolled
 * back and the transactions service voids the charge instead, at the processor too, so that no
 * customer stays charged for something the books do not hold.
 */
export class SettlementRefused extends Error {
  constructor(readonly reason: string) {
    super(`Settlement refused: ${reason}`);
  }
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
