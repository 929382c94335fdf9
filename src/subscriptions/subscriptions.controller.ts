import { Body, Controller, Get, HttpCode, Patch, Post, Query, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, Public } from '../auth/access.decorators';
import { bearerToken } from '../auth/bearer';
import type { AuthenticatedRequest, Principal } from '../auth/principal';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, toPageRequest } from '../common/pagination/pagination';
import { RateLimit } from '../common/rate-limit/rate-limit';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { MANAGE_TOKEN_SCHEME } from '../openapi/openapi';
import {
  CreateSubscriptionPlanDto,
  PlanListQueryDto,
  PublicPlanResponseDto,
  SubscriptionPlanResponseDto,
  UpdateSubscriptionPlanDto,
} from './dto/subscription-plan.dto';
import {
  CancelSubscriptionDto,
  PublicSubscriberResponseDto,
  SubscribeDto,
  SubscribeResponseDto,
  SubscriberListQueryDto,
  SubscriptionResponseDto,
} from './dto/subscription.dto';
import { INVALID_MANAGE_TOKEN, MANAGE_TOKEN_SHAPE } from './manage-token';
import { SubscriptionsService } from './subscriptions.service';

const PLAN_NOT_FOUND = ['Subscription plan not found.', 'subscription_plan_not_found'] as const;
const SUBSCRIPTION_NOT_FOUND = ['Subscription not found.', 'subscription_not_found'] as const;

/**
 * Subscription plans (API.md 10.2). Sellers manage them with a user token holding
 * `subscriptions.manage` (API keys get 403); the plan's public page and subscribe need nothing.
 */
@ApiTags('subscriptions')
@Controller('subscriptions/plan')
export class SubscriptionPlansController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post()
  @Authenticated()
  @Idempotent()
  @ApiOperation({
    summary: 'Create a subscription plan (price and interval are fixed once created)',
    description:
      'A recurring price of the seller in `seller`: `amount` every `interval_count` × `interval` (day, week, ' +
      'month, year), an optional free trial, and the payment types subscribers may use (`credit`, `pix`). ' +
      'Amount, interval, trial and payment types never change afterwards: create another plan instead. ' +
      'Needs `subscriptions.manage` on the seller (API keys get 403); an unknown seller, or one the user has ' +
      'no access to, answers 400 `seller_not_found` (as for events).',
  })
  @ApiCreatedResponse({ type: SubscriptionPlanResponseDto })
  @ApiErrorResponses(400, 409, 422)
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateSubscriptionPlanDto,
  ): Promise<SubscriptionPlanResponseDto> {
    return this.subscriptions.createPlan(principal, body);
  }

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: "A seller's subscription plans (`seller` required unless superuser)",
    description:
      'The plans of the seller in `seller` (active and inactive), newest first. Needs `subscriptions.manage` on ' +
      'that seller; a superuser may leave `seller` out and see every plan.',
  })
  @ApiOkResponse({ type: PageOf(SubscriptionPlanResponseDto) })
  @ApiErrorResponses(400, 404)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PlanListQueryDto) {
    return this.subscriptions.listPlans(principal, query, toPageRequest(query));
  }

  @Get(':plan_id')
  @Public()
  @ApiOperation({
    summary: 'Public context of an active plan, for the subscription page',
    description:
      "What a subscription page shows: the plan's terms and the seller's name. An inactive or unknown plan " +
      'answers 404.',
  })
  @ApiOkResponse({ type: PublicPlanResponseDto })
  @ApiErrorResponses(404)
  publicPlan(@UuidParam('plan_id', ...PLAN_NOT_FOUND) id: string): Promise<PublicPlanResponseDto> {
    return this.subscriptions.publicPlan(id);
  }

  @Patch(':plan_id')
  @Authenticated()
  @ApiOperation({
    summary: "Change a plan's texts or `active`; price, interval, trial and payment types are fixed",
    description:
      'Changes `name`, `description` or `active` (false: no new subscribers; current ones keep renewing). ' +
      'Sending `amount`, `interval`, `interval_count`, `trial_days`, `payment_types` or `seller` answers 400. ' +
      "Needs `subscriptions.manage` on the plan's seller; a plan of another seller answers 404.",
  })
  @ApiOkResponse({ type: SubscriptionPlanResponseDto })
  @ApiErrorResponses(400, 404)
  update(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('plan_id', ...PLAN_NOT_FOUND) id: string,
    @Body() body: UpdateSubscriptionPlanDto,
  ): Promise<SubscriptionPlanResponseDto> {
    return this.subscriptions.updatePlan(principal, id, body);
  }

  @Get(':plan_id/subscribers')
  @Authenticated()
  @ApiOperation({
    summary: "A plan's subscriptions (filter `status`)",
    description:
      "The plan's subscriptions with the subscriber's name, e-mail and document, newest first; filter " +
      "`status`. Needs `subscriptions.manage` on the plan's seller; a plan of another seller answers 404.",
  })
  @ApiOkResponse({ type: PageOf(SubscriptionResponseDto) })
  @ApiErrorResponses(400, 404)
  subscribers(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('plan_id', ...PLAN_NOT_FOUND) id: string,
    @Query() query: SubscriberListQueryDto,
  ) {
    return this.subscriptions.listSubscribers(principal, id, query, toPageRequest(query));
  }

  @Post(':plan_id/subscribe')
  @Public()
  @RateLimit('public_checkout')
  @Idempotent({ secret: true })
  @ApiOperation({
    summary: 'Subscribe to an active plan (public)',
    description:
      'Credit: the card is tokenized by the processor and charged now (402 `card_declined` and nothing created ' +
      'when declined), or at the end of the trial. A signup the seller could not charge (with or without a trial) ' +
      "is refused with the charge's 400: `seller_has_no_rate_plan`, `rate_plan_inactive`, " +
      '`payment_method_not_accepted`, `negative_seller_net`. A card charge whose outcome the processor has not told yet ' +
      '(a timeout) answers `incomplete` with the pending `transaction`: the subscription turns `active` once the ' +
      'charge is confirmed, or `canceled` if it was declined or never made. Pix: the subscription is `incomplete` ' +
      'until the pix in `pix` is paid. The `manage_token` is shown only here and in the welcome e-mail; a retry ' +
      'with the same Idempotency-Key never charges twice and answers 409 `idempotency_secret_not_replayable` ' +
      'with the `id` once the subscription exists.',
  })
  @ApiCreatedResponse({ type: SubscribeResponseDto })
  @ApiErrorResponses(400, 402, 404, 409, 422)
  subscribe(
    @UuidParam('plan_id', ...PLAN_NOT_FOUND) id: string,
    @Body() body: SubscribeDto,
  ): Promise<SubscribeResponseDto> {
    return this.subscriptions.subscribe(id, body);
  }
}

/** Subscriptions: the public subscriber page, and cancellation by the seller or the subscriber. */
@ApiTags('subscriptions')
@Controller('subscriptions/subscriber')
export class SubscribersController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Get(':subscriber_id')
  @Public()
  @ApiOperation({
    summary: 'Public context of a subscription (e-mail masked), with its charges',
    description:
      "The subscriber's page: status, plan, the card's brand and last 4 digits, the current period, the next " +
      'charge and the charges made, oldest first. The e-mail is masked and the document is not shown.',
  })
  @ApiOkResponse({ type: PublicSubscriberResponseDto })
  @ApiErrorResponses(404)
  get(@UuidParam('subscriber_id', ...SUBSCRIPTION_NOT_FOUND) id: string): Promise<PublicSubscriberResponseDto> {
    return this.subscriptions.publicSubscriber(id);
  }

  @Post(':subscriber_id/cancel')
  @HttpCode(200)
  @Authenticated({
    handlerVerifiedToken: { shape: MANAGE_TOKEN_SHAPE, scheme: MANAGE_TOKEN_SCHEME, invalid: INVALID_MANAGE_TOKEN },
  })
  @RateLimit('public_checkout')
  @ApiOperation({
    summary: 'Cancel a subscription: by the seller (user token), or by the subscriber (manage token)',
    description:
      'Sellers (`subscriptions.manage`) cancel now or at period end (`at_period_end`, default true) and get the ' +
      'subscription back. The subscriber sends `Authorization: Bearer <manage_token>` and cancels at period end; ' +
      'the answer is the public subscriber view. 409 `subscription_already_canceled` the second time. A ' +
      'subscription canceled now has its unpaid pix voided with it (that pix is refused from then on).',
  })
  @ApiBody({ type: CancelSubscriptionDto, required: false })
  @ApiExtraModels(SubscriptionResponseDto, PublicSubscriberResponseDto)
  @ApiOkResponse({
    description: 'The subscription (seller) or its public view (subscriber).',
    schema: {
      oneOf: [{ $ref: getSchemaPath(SubscriptionResponseDto) }, { $ref: getSchemaPath(PublicSubscriberResponseDto) }],
    },
  })
  @ApiErrorResponses(400, 404, 409)
  cancel(
    @Req() request: AuthenticatedRequest,
    @UuidParam('subscriber_id', ...SUBSCRIPTION_NOT_FOUND) id: string,
    @Body() body: CancelSubscriptionDto = {},
  ) {
    const canceler = request.user
      ? { kind: 'seller' as const, principal: request.user }
      : { kind: 'subscriber' as const, token: bearerToken(request.headers.authorization)! };
    return this.subscriptions.cancel(id, canceler, body?.at_period_end ?? true);
  }
}
