import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators';
import { FastJson } from '../common/http/fast-json';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import {
  CreateSplitRuleDto,
  CreateTransactionDto,
  SplitRuleResponseDto,
  TransactionListQueryDto,
  TransactionResponseDto,
  VoidTransactionDto,
} from './dto/transaction.dto';
import { TransactionsService } from './transactions.service';

const NOT_FOUND = 'Transaction not found.';

@ApiTags('unified transactions')
@Controller('unified/accounts/sellers/:sellers_pk/transactions')
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Post()
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.create' })
  @Idempotent()
  @FastJson(TransactionResponseDto)
  @ApiOperation({
    summary: 'Charge a payment (card, pix or boleto) through the payment processor',
    description:
      "Records a pending transaction, then charges it through the payment processor and settles it with the answer. Cards are Luhn-checked and their brand detected; only brand and last 4 digits are stored. A declined card is recorded too (201, `status: \"declined\"`, `decline_reason`); pix and boleto stay `pending` until paid, or until their window ends (pix `expires_at`, the end of the boleto's `due_date` in Brasília, America/Sao_Paulo), when they are voided with `void_reason` `payment_expired`. When the processor's outcome is unknown (a timeout, an answer that could not be recorded yet), the charge is answered 201 `pending` and settled later: retry with the same Idempotency-Key, never without it. The fee and split are resolved once from the seller's plans and kept. Refused with 400 and nothing charged: `seller_has_no_rate_plan`, `rate_plan_inactive`, `payment_method_not_accepted` (no rate cell for the payment), `negative_seller_net` (fee and shares above the amount), `validation_failed` (with `errors`).",
  })
  @ApiCreatedResponse({
    type: TransactionResponseDto,
    description: 'Created; a declined charge is recorded too (status "declined").',
  })
  @ApiErrorResponses(400, 409, 422)
  create(@Param('sellers_pk') sellerId: string, @Body() body: CreateTransactionDto): Promise<TransactionResponseDto> {
    return this.transactions.create(sellerId, body);
  }

  @Get()
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.view', credentials: 'jwt_or_api_key' })
  @ApiOperation({
    summary: "List the seller's unified transactions (filters, cursor pagination)",
    description:
      "The seller's transactions, newest first by `created_at` (`?ordering=created_at` for oldest first; those created at the same instant in the order they were written), cursor-paginated, filtered by status, payment type, brand, entry mode, source, creation period and amount range. A `cursor` this list did not give is 400 `invalid_cursor`.",
  })
  @ApiOkResponse({ type: PageOf(TransactionResponseDto) })
  @ApiErrorResponses(400)
  list(@Param('sellers_pk') sellerId: string, @Query() query: TransactionListQueryDto) {
    return this.transactions.list(sellerId, query, toPageRequest(query));
  }

  @Get(':id')
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.view', credentials: 'jwt_or_api_key' })
  @FastJson(TransactionResponseDto)
  @ApiOperation({
    summary: 'One unified transaction (the same structure as a list item)',
    description:
      'The transaction with its fees, split resolution, split rules and payment data (pix or boleto). A transaction of another seller answers 404.',
  })
  @ApiOkResponse({ type: TransactionResponseDto })
  get(
    @Param('sellers_pk') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'transaction_not_found') id: string,
  ): Promise<TransactionResponseDto> {
    return this.transactions.get(sellerId, id);
  }

  @Post(':id/void')
  @HttpCode(200)
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.void' })
  @Idempotent()
  @ApiOperation({
    summary: 'Void (reverse) an approved or pending transaction',
    description:
      "Voids an `approved` or `pending` transaction (optional `reason`); the seller's share reverses and split rules stay as history. Any other state, a second void included: 409 `invalid_state`.",
  })
  @ApiBody({ type: VoidTransactionDto, required: false })
  @ApiOkResponse({ type: TransactionResponseDto })
  @ApiErrorResponses(400, 409, 422)
  void(
    @Param('sellers_pk') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'transaction_not_found') id: string,
    @Body() body: VoidTransactionDto = {},
  ): Promise<TransactionResponseDto> {
    return this.transactions.void(sellerId, id, body?.reason);
  }

  @Post(':id/split')
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.split' })
  @Idempotent()
  @ApiOperation({
    summary: 'Add a split rule to the transaction',
    description:
      "Sends part of the transaction to another unified account, as a fixed amount or a percentage of the transaction amount. A percentage rule is fixed in cents when it is added: that percentage of the amount, rounded half up, each rule on its own. Unknown recipient: 400 `recipient_not_found`; all rules together above the seller's net: 400 `split_exceeds_net`; voided or declined transaction: 409 `invalid_state`.",
  })
  @ApiCreatedResponse({ type: SplitRuleResponseDto })
  @ApiErrorResponses(400, 409, 422)
  addSplitRule(
    @Param('sellers_pk') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'transaction_not_found') id: string,
    @Body() body: CreateSplitRuleDto,
  ): Promise<SplitRuleResponseDto> {
    return this.transactions.addSplitRule(sellerId, id, body);
  }

  @Delete(':id/split/:split_pk')
  @HttpCode(204)
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.split' })
  @ApiOperation({
    summary: 'Remove a split rule',
    description:
      'Deletes one split rule of the transaction; an unknown rule answers 404, a voided or declined transaction 409 `invalid_state`.',
  })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrorResponses(409)
  async removeSplitRule(
    @Param('sellers_pk') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'transaction_not_found') id: string,
    @UuidParam('split_pk', 'Split rule not found.', 'split_rule_not_found') ruleId: string,
  ): Promise<void> {
    await this.transactions.removeSplitRule(sellerId, id, ruleId);
  }
}
