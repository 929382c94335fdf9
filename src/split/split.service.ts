import { Injectable } from '@nestjs/common';
import { BadRequestError } from '../common/errors/api-error';
import { Recipients, Resolution, ResolutionInput, ResolutionRefused, resolveSplit } from './resolve';
import { CompiledPlanCache, RatePlanSource, SplitPlanSource } from './split-engine';

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
}
