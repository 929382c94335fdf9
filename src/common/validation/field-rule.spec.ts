import { IsIn, IsOptional, IsString } from 'class-validator';
import { ValidationError } from '../errors/api-error';
import { FieldRule } from './field-rule';
import { assertValid } from './validation.pipe';

class Payment {
  @IsIn(['card', 'boleto'])
  type: string;

  @IsOptional()
  @IsString()
  @FieldRule('holderOfType', (holder, payment: Payment) =>
    payment.type === 'boleto' ? { name: 'is required for boleto' } : holder === '' ? 'must not be empty' : null,
  )
  holder?: string;

  @FieldRule(
    'noteOfType',
    (note, payment: Payment) => (payment.type === 'card' && !note ? 'is required for card' : null),
    {
      whenAbsent: true,
    },
  )
  note?: string;
}

const errorsOf = async (input: object) => {
  try {
    await assertValid(Payment, input as Payment);
    return {};
  } catch (error) {
    return (error as ValidationError).errors;
  }
};

describe('FieldRule', () => {
  it('reports on the field itself, or under the paths its finding names', async () => {
    expect(await errorsOf({ type: 'card', holder: '', note: 'n' })).toEqual({ holder: ['must not be empty'] });
    expect(await errorsOf({ type: 'boleto', holder: 'x' })).toEqual({ 'holder.name': ['is required for boleto'] });
  });

  it('runs on an absent field only when declared so', async () => {
    expect(await errorsOf({ type: 'boleto' })).toEqual({});
    expect(await errorsOf({ type: 'card' })).toEqual({ note: ['is required for card'] });
  });

  it('joins the messages of the field rules and the other constraints under one path', async () => {
    expect(await errorsOf({ type: 'card', holder: 5, note: 'n' })).toEqual({ holder: ['must be a string'] });
    expect(await errorsOf({ type: 'card', holder: 'ok', note: 'n', extra: 1 })).toEqual({
      extra: ['should not exist'],
    });
  });
});
