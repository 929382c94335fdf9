import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
  constructor(@Inject(TransactionsService) private readonly transactions: TransactionsService) {}

  @Post()
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.create' })
  @Idempotent()
  @FastJson(TransactionResponseDto)
  @ApiOperation({ summary: 'Charge a payment (card, pix or boleto) through the payment processor' })
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
  @ApiOperation({ summary: "List the seller's unified transactions (filters, cursor pagination)" })
  @ApiOkResponse({ type: PageOf(TransactionResponseDto) })
  @ApiErrorResponses(400)
  list(@Param('sellers_pk') sellerId: string, @Query() query: TransactionListQueryDto) {
    return this.transactions.list(sellerId, query, toPageRequest(query));
  }

  @Get(':id')
  @Authenticated({ seller: 'sellers_pk', permission: 'transactions.view', credentials: 'jwt_or_api_key' })
  @FastJson(TransactionResponseDto)
  @ApiOperation({ summary: 'One unified transaction (the same structure as a list item)' })
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
  @ApiOperation({ summary: 'Void (reverse) an approved or pending transaction' })
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
  @ApiOperation({ summary: 'Add a split rule to the transaction' })
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
  @ApiOperation({ summary: 'Remove a split rule' })
  @ApiNoContentResponse({ description: 'Removed.' })
  async removeSplitRule(
    @Param('sellers_pk') sellerId: string,
    @UuidParam('id', NOT_FOUND, 'transaction_not_found') id: string,
    @UuidParam('split_pk', 'Split rule not found.', 'split_rule_not_found') ruleId: string,
  ): Promise<void> {
    await this.transactions.removeSplitRule(sellerId, id, ruleId);
  }
}
