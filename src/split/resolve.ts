import { Cents, percentOf, roundToTotal, FULL_PERCENT_UNITS } from '../common/money/money';
import type { FeeCell } from './fee-table';
import { DEVELOPER_LABEL, SplitCell } from './split-table';
import { EntryMode, lookupCell, lookupPosition, PaymentType, Table } from './table';

/**
 * The split resolution of API.md section 7, as pure functions over compiled plans: a
 * lookup in two maps and integer arithmetic. No framework, no I/O.
 */
export interface CompiledSplitPlan {
  automaticDeveloperFee: boolean;
  cardPresent: Table<SplitCell>;
  online: Table<SplitCell>;
}

export interface ResolutionInput {
  amount: Cents;
  paymentType: PaymentType;
  installments: number;
  /** Card brand; ignored for pix and boleto. */
  brand: string | null;
  entryMode: EntryMode;
}

export interface Recipients {
  developerAccount: string | null;
  participants: Readonly<Record<string, string>>;
}

export interface ResolvedShare {
  label: string;
  role: 'developer' | 'participant';
  units: number;
  amount: Cents;
  recipient: string | null;
}

export interface Resolution {
  fee: { units: number; fixed: Cents; amount: Cents };
  shares: ResolvedShare[];
  developerAmount: Cents;
  participantsAmount: Cents;
  sellerNet: Cents;
}

/** A payment the plans refuse; `code` is the API error code. */
export class ResolutionRefused extends Error {
  constructor(
    readonly code: 'payment_method_not_accepted' | 'negative_seller_net',
    message: string,
  ) {
    super(message);
    this.name = 'ResolutionRefused';
  }
}

const NO_RECIPIENTS: Recipients = { developerAccount: null, participants: {} };

export function resolveSplit(
  input: ResolutionInput,
  fees: Table<FeeCell>,
  plan: CompiledSplitPlan | null,
  recipients: Recipients = NO_RECIPIENTS,
): Resolution {
  const { key, brand } = lookupPosition(input.paymentType, input.installments, input.brand);

  const feeCell = lookupCell(fees, key, brand);
  if (!feeCell) {
    throw new ResolutionRefused(
      'payment_method_not_accepted',
      `The rate plan does not price ${describe(input)}: the payment method is not accepted.`,
    );
  }
  const feeAmount = percentOf(input.amount, feeCell.units) + feeCell.fixed;

  const cell = plan
    ? lookupCell(input.entryMode === 'card_present' ? plan.cardPresent : plan.online, key, brand)
    : undefined;
  const shares: ResolvedShare[] = [];
  let developerAmount = 0;
  let participantsAmount = 0;
  if (cell) {
    const total = percentOf(input.amount, cell.totalUnits);
    const exact = cell.units.map((u) => input.amount * u);
    const amounts = roundToTotal(exact, FULL_PERCENT_UNITS, total);
    for (let i = 0; i < cell.labels.length; i++) {
      const label = cell.labels[i];
      const developer = label === DEVELOPER_LABEL;
      if (developer) developerAmount += amounts[i];
      else participantsAmount += amounts[i];
      shares.push({
        label,
        role: developer ? 'developer' : 'participant',
        units: cell.units[i],
        amount: amounts[i],
        recipient: developer
          ? plan!.automaticDeveloperFee
            ? recipients.developerAccount
            : null
          : Object.hasOwn(recipients.participants, label)
            ? recipients.participants[label]
            : null,
      });
    }
  }

  const sellerNet = input.amount - feeAmount - developerAmount - participantsAmount;
  if (sellerNet < 0) {
    throw new ResolutionRefused(
      'negative_seller_net',
      'Fees and split shares exceed the amount: the seller would receive less than nothing.',
    );
  }
  return {
    fee: { units: feeCell.units, fixed: feeCell.fixed, amount: feeAmount },
    shares,
    developerAmount,
    participantsAmount,
    sellerNet,
  };
}

function describe(input: ResolutionInput): string {
  if (input.paymentType === 'pix' || input.paymentType === 'boleto') return input.paymentType;
  return `${input.paymentType} in ${input.installments} installment${input.installments > 1 ? 's' : ''} with ${input.brand ?? 'no brand'}`;
}
