import { Injectable } from '@nestjs/common';
import { BadRequestError } from '../common/errors/api-error';
import { formatMoney, formatPercentage } from '../common/money/money';
import { Recipients, Resolution, ResolutionInput, ResolutionRefused, resolveSplit } from './resolve';
import { CompiledPlanCache, RatePlanSource, SplitPlanSource } from './split-engine';

/** The resolution as the API shows it: money and percentages as decimal strings. */
export interface ResolutionView {
  fee: { percentage: string; fixed: string; amount: string };
  shares: Array<{
    label: string;
    role: 'developer' | 'participant';
    percentage: string;
    amount: string;
    recipient: string | null;
  }>;
  developer_amount: string;
  participants_amount: string;
  seller_net: string;
}

/** The Nest face of the split engine: one plan cache per process, refusals as API errors. */
@Injectable()
export class SplitService {
  private readonly cache = new CompiledPlanCache();

  resolve(
    input: ResolutionInput,
    ratePlan: RatePlanSource,
    splitPlan: SplitPlanSource | null,
    recipients?: Recipients,
  ): Resolution {
    try {
      return resolveSplit(
        input,
        this.cache.ratePlan(ratePlan),
        splitPlan ? this.cache.splitPlan(splitPlan) : null,
        recipients,
      );
    } catch (error) {
      if (error instanceof ResolutionRefused) throw new BadRequestError(error.code, error.message);
      throw error;
    }
  }

  static view(resolution: Resolution): ResolutionView {
    return {
      fee: {
        percentage: formatPercentage(resolution.fee.units),
        fixed: formatMoney(resolution.fee.fixed),
        amount: formatMoney(resolution.fee.amount),
      },
      shares: resolution.shares.map((s) => ({
        label: s.label,
        role: s.role,
        percentage: formatPercentage(s.units),
        amount: formatMoney(s.amount),
        recipient: s.recipient,
      })),
      developer_amount: formatMoney(resolution.developerAmount),
      participants_amount: formatMoney(resolution.participantsAmount),
      seller_net: formatMoney(resolution.sellerNet),
    };
  }
}
