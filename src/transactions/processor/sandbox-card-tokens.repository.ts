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

  /** The token's outcome (null: approved) and whether the card has expired; null for an unknown token. */
  async find(token: string): Promise<{ outcome: string | null; expired: boolean } | null> {
    const [row]: Array<{ outcome: string | null; expired: boolean }> = await this.dataSource.query(
      `SELECT outcome, make_date(exp_year, exp_month, 1) + interval '1 month' <= now() AS expired
       FROM sandbox_card_tokens WHERE token = $1`,
      [token],
    );
    return row ?? null;
  }
}
