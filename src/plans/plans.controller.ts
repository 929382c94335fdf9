import { Body, Controller, Get, HttpCode, Inject, Post, Query } from '@nestjs/common';
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
  ResolutionResponseDto,
  SimulateSplitDto,
  SplitPlanResponseDto,
} from './dto/plans.dto';
import { PlansService } from './plans.service';

/**
 * Rate plans are read-only here: they are created by the sync routine, and never deleted
 * (split plans and history reference them), so POST on the collection and PUT/PATCH/DELETE
 * on an item answer 405. Split plans are immutable: create a new one instead of editing.
 */
@ApiTags('plans')
@Controller('plans/plans')
export class PlansController {
  constructor(@Inject(PlansService) private readonly plans: PlansService) {}

  @Get('rates')
  @Authenticated()
  @ApiOperation({ summary: 'List rate plans (search by name)' })
  @ApiOkResponse({ type: PageOf(RatePlanResponseDto) })
  @ApiErrorResponses(400, 405)
  listRatePlans(@Query() query: PlanSearchQueryDto) {
    return this.plans.listRatePlans(toPageRequest(query), query.search);
  }

  @Get('rates/:id')
  @Authenticated()
  @ApiOperation({ summary: 'One rate plan with its fee table' })
  @ApiOkResponse({ type: RatePlanResponseDto })
  @ApiErrorResponses(404, 405)
  getRatePlan(
    @UuidParam('id', 'Rate plan not found.', 'rate_plan_not_found') id: string,
  ): Promise<RatePlanResponseDto> {
    return this.plans.getRatePlan(id);
  }

  @Post('split')
  @Authenticated({ superuser: true })
  @Idempotent()
  @ApiOperation({ summary: 'Create a split plan (superusers; split plans are global)' })
  @ApiCreatedResponse({ type: SplitPlanResponseDto })
  @ApiErrorResponses(400)
  createSplitPlan(@Body() body: CreateSplitPlanDto): Promise<SplitPlanResponseDto> {
    return this.plans.createSplitPlan(body);
  }

  @Get('split')
  @Authenticated()
  @ApiOperation({ summary: 'List split plans (search by name)' })
  @ApiOkResponse({ type: PageOf(SplitPlanResponseDto) })
  @ApiErrorResponses(400)
  listSplitPlans(@Query() query: PlanSearchQueryDto) {
    return this.plans.listSplitPlans(toPageRequest(query), query.search);
  }

  @Get('split/:id')
  @Authenticated()
  @ApiOperation({ summary: 'One split plan' })
  @ApiOkResponse({ type: SplitPlanResponseDto })
  @ApiErrorResponses(404, 405)
  getSplitPlan(
    @UuidParam('id', 'Split plan not found.', 'split_plan_not_found') id: string,
  ): Promise<SplitPlanResponseDto> {
    return this.plans.getSplitPlan(id);
  }

  @Post('split/:id/simulate')
  @HttpCode(200)
  @Authenticated()
  @ApiOperation({ summary: 'Resolve fee and split shares for a payment under this plan (nothing is stored)' })
  @ApiOkResponse({ type: ResolutionResponseDto })
  @ApiErrorResponses(400, 404)
  simulate(
    @UuidParam('id', 'Split plan not found.', 'split_plan_not_found') id: string,
    @Body() body: SimulateSplitDto,
  ): Promise<ResolutionResponseDto> {
    return this.plans.simulate(id, body);
  }
}
