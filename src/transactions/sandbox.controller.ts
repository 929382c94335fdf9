import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/access.decorators';
import type { Principal } from '../auth/principal';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { TransactionResponseDto } from './dto/transaction.dto';
import { TransactionsService } from './transactions.service';
import { NoBody, TakesNoBody } from '../common/validation/no-body';

/** Routed only with the sandbox processor: pays a pending pix or boleto charge. */
@ApiTags('sandbox')
@Controller('sandbox/transactions')
export class SandboxController {
  constructor(private readonly transactions: TransactionsService) {}

  @Post(':id/confirm')
  @TakesNoBody()
  @HttpCode(200)
  @Authenticated()
  @Idempotent()
  @ApiOperation({
    summary: "Sandbox: confirm a pending pix or boleto payment (needs transactions.create on the transaction's seller)",
    description:
      "Sandbox processor only: marks a pending pix or boleto transaction as paid (approved), as the bank's notice would. Other states, a pending card charge (whose outcome only the processor knows), and a charge past its window to be paid (pix `expires_at`, the end of the boleto's `due_date` in Brasília, America/Sao_Paulo) answer 409 `invalid_state`.",
  })
  @ApiOkResponse({ type: TransactionResponseDto })
  @ApiErrorResponses(404, 409, 422)
  confirm(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('id', 'Transaction not found.', 'transaction_not_found') id: string,
    @Body() _none: NoBody,
  ): Promise<TransactionResponseDto> {
    return this.transactions.confirmPending(principal, id);
  }
}
