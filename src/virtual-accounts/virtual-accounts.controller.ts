import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators';
import { FastJson } from '../common/http/fast-json';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, PageQueryDto, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import {
  PayDto,
  PostingResponseDto,
  PostingsQueryDto,
  TransferDto,
  VirtualAccountResponseDto,
} from './dto/virtual-account.dto';
import { VirtualAccountsService } from './virtual-accounts.service';

export const VIEW = { seller: 'account_id', permission: 'virtualaccounts.view' } as const;
export const OPERATE = { seller: 'account_id', permission: 'virtualaccounts.operate' } as const;
export const NOT_FOUND = 'Virtual account not found.';

/**
 * Virtual accounts of a seller. There is no DELETE, not even for administrators: it would
 * destroy accounting history (405). Retire an account by emptying it with a transfer.
 */
@ApiTags('virtual accounts')
@Controller('uniconta/seller/:account_id/virtualaccounts')
export class VirtualAccountsController {
  constructor(private readonly accounts: VirtualAccountsService) {}

  @Get()
  @Authenticated(VIEW)
  @ApiOperation({
    summary: "The seller's virtual accounts",
    description: "The seller's virtual accounts (its own and its sub-accounts'), with their balances.",
  })
  @ApiOkResponse({ type: PageOf(VirtualAccountResponseDto) })
  @ApiErrorResponses(400)
  list(@Param('account_id') sellerId: string, @Query() query: PageQueryDto) {
    return this.accounts.list(sellerId, toPageRequest(query));
  }

  @Get(':id')
  @Authenticated(VIEW)
  @ApiOperation({
    summary: 'One virtual account with its balance',
    description:
      'The account and its balance. Accounts are never deleted (DELETE answers 405): that would destroy accounting history; empty one with a transfer instead.',
  })
  @ApiOkResponse({ type: VirtualAccountResponseDto })
  get(
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
  ): Promise<VirtualAccountResponseDto> {
    return this.accounts.get(sellerId, id);
  }

  @Get(':id/postings')
  @Authenticated(VIEW)
  @ApiOperation({
    summary: 'Statement: postings newest first, each with the balance after it',
    description:
      "The account's postings, newest first, each with the balance after it and its `status` (`processing`, `completed`, `failed`); filters `type`, `created_after`, `created_before`. A posting is listed as soon as its movement is answered. Postings are stamped when applied to the account, one after another, so `created_at` follows the statement's order: a client polling with `created_after` (inclusive) misses none.",
  })
  @ApiOkResponse({ type: PageOf(PostingResponseDto) })
  @ApiErrorResponses(400)
  postings(
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
    @Query() query: PostingsQueryDto,
  ) {
    return this.accounts.postings(sellerId, id, query, toPageRequest(query));
  }

  @Post(':id/pay')
  @Authenticated(OPERATE)
  @Idempotent()
  @ApiOperation({
    summary:
      'Pay a bill from the virtual account: a payout, `processing` until it completes or fails (400 insufficient_funds past the balance)',
    description:
      'Pays a bill (`barcode`, `payee`) from the balance: the amount is posted at once (reserved) with `status: processing` and sent through the payout port; it becomes `completed`, or `failed` with a `reversal` posting that gives the money back. The balance never goes below zero: 400 `insufficient_funds`, and nothing is written.',
  })
  @ApiCreatedResponse({ type: PostingResponseDto })
  @ApiErrorResponses(400, 409, 422)
  pay(
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
    @Body() body: PayDto,
  ): Promise<PostingResponseDto> {
    return this.accounts.pay(sellerId, id, body);
  }

  @Post(':id/transfer')
  @Authenticated(OPERATE)
  @Idempotent()
  @FastJson(PostingResponseDto)
  @ApiOperation({
    summary:
      'Transfer out: to another virtual account (completes at once), or a PIX key or bank account (a payout, `processing` until it completes or fails)',
    description:
      'Moves money to another virtual account (completed at once), or out to a PIX key or bank account (a payout: `processing`, then `completed`, or `failed` with a reversal that gives the money back). Sandbox: the PIX key `fail@sandbox.test` and the bank account `0000000` fail. 400 `insufficient_funds` past the balance, and nothing is written.',
  })
  @ApiCreatedResponse({ type: PostingResponseDto })
  @ApiErrorResponses(400, 409, 422)
  transfer(
    @Param('account_id') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'virtual_account_not_found') id: string,
    @Body() body: TransferDto,
  ): Promise<PostingResponseDto> {
    return this.accounts.transfer(sellerId, id, body);
  }
}
