import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/access.decorators';
import type { Principal } from '../auth/principal';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { DepositsService } from './deposits.service';
import { DepositDto, DepositResponseDto, DepositsQueryDto } from './dto/virtual-account.dto';
import { NOT_FOUND, OPERATE, VIEW } from './virtual-accounts.controller';

/** Deposits into a seller's virtual account (API.md section 9). */
@ApiTags('virtual accounts')
@Controller('uniconta/seller/:account_id/virtualaccounts/:id')
export class DepositsController {
  constructor(private readonly deposits: DepositsService) {}

  @Post('deposit')
  @Authenticated(OPERATE)
  @Idempotent()
  @ApiOperation({
    summary:
      'Deposit: a pending pix or boleto deposit with its payment instructions, posted once paid; ' +
      'or a manual deposit (superusers, with a reason), posted at once and audited',
    description:
      'Money enters only when it really arrives: a `pix` (default) or `boleto` deposit answers `pending` with its payment instructions, is posted once the processor confirms the payment, and expires unpaid. A `manual` deposit (superusers only, `reason` required, e.g. a reconciled wire) is posted at once and written to the audit log.',
  })
  @ApiCreatedResponse({ type: DepositResponseDto })
  @ApiErrorResponses(400, 409, 422)
  deposit(
    @CurrentPrincipal() principal: Principal,
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
    @Body() body: DepositDto,
  ): Promise<DepositResponseDto> {
    return this.deposits.create(sellerId, id, body, {
      superuser: principal.kind === 'user' && principal.isSuperuser,
    });
  }

  @Get('deposits')
  @Authenticated(VIEW)
  @ApiOperation({
    summary: "The virtual account's deposits and their status, newest first",
    description: "The account's deposits (`pending`, `completed`, `expired`), newest first; filter `status`.",
  })
  @ApiOkResponse({ type: PageOf(DepositResponseDto) })
  @ApiErrorResponses(400)
  list(
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
    @Query() query: DepositsQueryDto,
  ) {
    return this.deposits.list(sellerId, id, query, toPageRequest(query));
  }

  @Get('deposits/:deposit_id')
  @Authenticated(VIEW)
  @ApiOperation({
    summary: 'One deposit and its status',
    description: 'One deposit of the account, with its payment instructions and, once completed, its posting.',
  })
  @ApiOkResponse({ type: DepositResponseDto })
  get(
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
    @UuidParam('deposit_id', 'Deposit not found.', 'deposit_not_found') depositId: string,
  ): Promise<DepositResponseDto> {
    return this.deposits.get(sellerId, id, depositId);
  }
}
