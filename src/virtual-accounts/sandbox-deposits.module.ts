import { Body, Controller, HttpCode, Injectable, Module, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/access.decorators';
import { AuthModule } from '../auth/auth.module';
import { AuthorizationService } from '../auth/authorization.service';
import type { Principal } from '../auth/principal';
import { NotFoundError } from '../common/errors/api-error';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { DepositsService } from './deposits.service';
import { DepositResponseDto } from './dto/virtual-account.dto';
import { VirtualAccountsModule } from './virtual-accounts.module';
import { NoBody, TakesNoBody } from '../common/validation/no-body';

const NOT_FOUND = 'Deposit not found.';
const depositNotFound = () => new NotFoundError(NOT_FOUND, 'deposit_not_found');

/** Sandbox: the caller, with virtualaccounts.operate on the deposit's seller (or a superuser), says it was paid. */
@Injectable()
export class SandboxDeposits {
  constructor(
    private readonly deposits: DepositsService,
    private readonly authorization: AuthorizationService,
  ) {}

  async confirm(principal: Principal, id: string): Promise<DepositResponseDto> {
    const sellerId = await this.deposits.sellerOf(id);
    if (!sellerId) throw depositNotFound();
    // A deposit of a seller the caller cannot see does not exist for them.
    await this.authorization.authorizeSeller(principal, sellerId, {
      permission: 'virtualaccounts.operate',
      hiddenAs: depositNotFound(),
    });
    return this.deposits.confirm(id);
  }
}

@ApiTags('sandbox')
@Controller('sandbox/deposits')
export class SandboxDepositsController {
  constructor(private readonly sandbox: SandboxDeposits) {}

  @Post(':id/confirm')
  @TakesNoBody()
  @HttpCode(200)
  @Authenticated()
  @Idempotent()
  @ApiOperation({
    summary:
      "Sandbox: the payer paid a pending pix or boleto deposit; it is posted (needs virtualaccounts.operate on the deposit's seller)",
    description:
      'Sandbox only: plays the processor confirming the payment of a pending deposit, which is then posted and `completed`. 409 `invalid_state` for a deposit that is not pending or has expired; 404 for a deposit of a seller the caller cannot see.',
  })
  @ApiOkResponse({ type: DepositResponseDto })
  @ApiErrorResponses(404, 409, 422)
  confirm(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('id', NOT_FOUND, 'deposit_not_found') id: string,
    @Body() _none: NoBody,
  ): Promise<DepositResponseDto> {
    return this.sandbox.confirm(principal, id);
  }
}

/** Routed only with the sandbox bank (PAYMENTS_PROCESSOR=sandbox): a separate module, as it needs AuthModule. */
@Module({
  imports: [AuthModule, VirtualAccountsModule],
  controllers: [SandboxDepositsController],
  providers: [SandboxDeposits],
})
export class SandboxDepositsModule {}
