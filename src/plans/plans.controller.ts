import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import {
  CreateSplitPlanDto,
  PlanSearchQueryDto,
  RatePlanResponseDto,
  SimulateSplitDto,
  SplitPlanResponseDto,
} from './dto/plans.dto';
import { ResolutionResponseDto } from './dto/resolution.dto';
import { PlansService } from './plans.service';

/**
 * Rate plans are read-only here: they are created by the sync routine, and never deleted
 * (split plans and history reference them), so POST on the collection and PUT/PATCH/DELETE
 * on an item answer 405. Split plans are immutable: create a new one instead of editing.
 */
@ApiTags('plans')
@Controller('plans/plans')
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  @Get('rates')
  @Authenticated()
  @ApiOperation({
    summary: 'List rate plans (search by name)',
    description:
      "Rate plans price a seller's payments: a fee cell (percentage + fixed) per payment type, installments and brand. They are written only by `npm run cli -- rates:sync` and by migrations, never through the API: POST here and PUT, PATCH or DELETE on an item answer 405.",
  })
  @ApiOkResponse({ type: PageOf(RatePlanResponseDto) })
  @ApiErrorResponses(400)
  listRatePlans(@Query() query: PlanSearchQueryDto) {
    return this.plans.listRatePlans(toPageRequest(query), query.search);
  }

  @Get('rates/:id')
  @Authenticated()
  @ApiOperation({
    summary: 'One rate plan with its fee table',
    description:
      'The rate plan with its fee table; `fees` maps `<type><installments>` to brand to `{percentage, fixed}`.',
  })
  @ApiOkResponse({ type: RatePlanResponseDto })
  @ApiErrorResponses(404)
  getRatePlan(
    @UuidParam('id', 'Rate plan not found.', 'rate_plan_not_found') id: string,
  ): Promise<RatePlanResponseDto> {
    return this.plans.getRatePlan(id);
  }

  @Post('split')
  @Authenticated({ superuser: true })
  @Idempotent()
  @ApiOperation({
    summary: 'Create a split plan (superusers; split plans are global)',
    description:
      'A split plan shares each payment among labels (`Programador`, `Master`, `Agente`, …) by payment type, installments and brand, for card-present (`split_details`) and online (`split_details_online`) payments. Split plans are immutable (PUT, PATCH and DELETE answer 405): create a new one and point the seller at it. Unknown `rate_plan`: 400 `rate_plan_not_found`; a bad table: 400 with the path of each problem in `errors`.',
  })
  @ApiCreatedResponse({ type: SplitPlanResponseDto })
  @ApiErrorResponses(400)
  createSplitPlan(@Body() body: CreateSplitPlanDto): Promise<SplitPlanResponseDto> {
    return this.plans.createSplitPlan(body);
  }

  @Get('split')
  @Authenticated()
  @ApiOperation({
    summary: 'List split plans (search by name)',
    description: 'Split plans, newest first, cursor-paginated; `?search=` matches the name.',
  })
  @ApiOkResponse({ type: PageOf(SplitPlanResponseDto) })
  @ApiErrorResponses(400)
  listSplitPlans(@Query() query: PlanSearchQueryDto) {
    return this.plans.listSplitPlans(toPageRequest(query), query.search);
  }

  @Get('split/:id')
  @Authenticated()
  @ApiOperation({
    summary: 'One split plan',
    description: 'The split plan with its two tables as stored (single quotes of the input replaced by double quotes).',
  })
  @ApiOkResponse({ type: SplitPlanResponseDto })
  @ApiErrorResponses(404)
  getSplitPlan(
    @UuidParam('id', 'Split plan not found.', 'split_plan_not_found') id: string,
  ): Promise<SplitPlanResponseDto> {
    return this.plans.getSplitPlan(id);
  }

  @Post('split/:id/simulate')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({
    summary: 'Resolve fee and split shares for a payment under this plan (nothing is stored)',
    description:
      "Runs the split resolution of a payment under this plan and its rate plan, as a charge would, and stores nothing: the fee, each label's share (cents apportioned by largest remainder), the developer and participant totals and the seller's net. No rate cell for the payment: 400 `payment_method_not_accepted`.",
  })
  @ApiOkResponse({ type: ResolutionResponseDto })
  @ApiErrorResponses(400, 404)
  simulate(
    @UuidParam('id', 'Split plan not found.', 'split_plan_not_found') id: string,
    @Body() body: SimulateSplitDto,
  ): Promise<ResolutionResponseDto> {
    return this.plans.simulate(id, body);
  }
}
