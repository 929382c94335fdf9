import { BadRequestError, NotFoundError, ValidationError } from '../common/errors/api-error';
import { checkMoney, Cents } from '../common/money/money';
import type { PostedLine, Refusal } from './ledger.repository';

export function virtualAccountNotFound(): NotFoundError {
  return new NotFoundError('Virtual account not found.', 'virtual_account_not_found');
}

/** The lines of a movement the ledger accepted; a refusal becomes the API error that says why. */
export function postedOrThrow(result: PostedLine[] | Refusal): PostedLine[] {
  if (result === 'account_not_found') throw virtualAccountNotFound();
  if (result === 'destination_not_found') {
    throw new BadRequestError('destination_not_found', 'The destination virtual account does not exist.');
  }
  if (result === 'insufficient_funds') {
    throw new BadRequestError('insufficient_funds', 'The virtual account does not hold enough funds.');
  }
  if (result === 'balance_limit') {
    throw new BadRequestError(
      'balance_limit_exceeded',
      'A virtual account cannot hold more than 1,000,000,000,000.00.',
    );
  }
  return result;
}

export function amountInCents(amount: string): Cents {
  const checked = checkMoney(amount);
  if (!checked.ok) throw ValidationError.of('amount', checked.message);
  return checked.value;
}
