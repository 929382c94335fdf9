import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { CardToken } from './payment-processor';

/**
 * The sandbox processor's card vault (`sandbox_card_tokens`): per token only what it needs to
 * play a processor, the test card's outcome, brand, last 4 digits and expiry; never the number
 * or CVV.
 */
@Injectable()
export class SandboxCardTokensRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(card: CardToken, outcome: string | null): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO sandbox_card_tokens (token, outcome, brand, last4, exp_month, exp_year) VALUES ($1, $2, $3, $4, $5, $6)`,
      [card.token, outcome, card.brand, card.last4, card.expMonth, card.expYear],
    );
  }

  /** The token's outcome (null: approved) and the card's expiry; null for an unknown token. */
  async find(token: string): Promise<StoredCard | null> {
    const [row]: StoredCard[] = await this.dataSource.query(
      `SELECT outcome, exp_month AS "expMonth", exp_year AS "expYear" FROM sandbox_card_tokens WHERE token = $1`,
      [token],
    );
    return row ?? null;
  }
}

/** What the vault keeps of a card to answer its charges: the test card's outcome (null: approved) and its expiry. */
export interface StoredCard {
  outcome: string | null;
  expMonth: number;
  expYear: number;
}
