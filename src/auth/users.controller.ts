import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { RateLimit } from '../common/rate-limit/rate-limit';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { Authenticated, CurrentPrincipal, Public } from './access.decorators';
import {
  AccessTokenResponseDto,
  LoginDto,
  MeResponseDto,
  MessageResponseDto,
  PasswordRecoveryConfirmDto,
  PasswordRecoveryRequestDto,
  RefreshDto,
  RegisterDto,
  SessionResponseDto,
  UserResponseDto,
} from './dto/user.dto';
import { PasswordRecoveryService } from './password-recovery.service';
import type { UserPrincipal } from './principal';
import { SessionTokens, TokensService } from './tokens.service';
import { UsersService } from './users.service';

@ApiTags('users and sessions')
@Controller('user')
export class UsersController {
  constructor(
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly recovery: PasswordRecoveryService,
  ) {}

  @Post('register')
  @Public()
  @Idempotent()
  @ApiOperation({
    summary: 'Create a user account',
    description:
      'Creates a user (no access to any seller yet). An e-mail already registered answers 409 `email_taken`.',
  })
  @ApiCreatedResponse({ type: UserResponseDto })
  @ApiErrorResponses(400, 409)
  register(@Body() body: RegisterDto): Promise<UserResponseDto> {
    return this.users.register(body);
  }

  @Post('login')
  @HttpCode(200)
  @Public()
  @RateLimit('login')
  @ApiOperation({
    summary: 'Authenticate: returns the access and refresh tokens',
    description:
      'Exchanges e-mail and password for an access token (Bearer on every other call) and a refresh token. Unknown e-mail and wrong password get the same 401 `invalid_credentials`. Rate-limited per address and e-mail.',
  })
  @ApiOkResponse({ type: SessionResponseDto })
  @ApiErrorResponses(400, 401)
  login(@Body() body: LoginDto): Promise<SessionTokens> {
    return this.users.login(body.email, body.password);
  }

  @Post('token/refresh')
  @HttpCode(200)
  @Public()
  @ApiOperation({
    summary: 'Renew the session: a new access token for a refresh token',
    description:
      'A new access token for a valid refresh token; 401 when it is invalid, expired, revoked or an access token.',
  })
  @ApiOkResponse({ type: AccessTokenResponseDto })
  @ApiErrorResponses(400, 401)
  refresh(@Body() body: RefreshDto): Promise<AccessTokenResponseDto> {
    return this.tokens.refresh(body.refresh);
  }

  @Post('logout')
  @HttpCode(204)
  @Public()
  @ApiOperation({
    summary: 'End the session: the refresh token stops working',
    description: 'Revokes the refresh token and the access tokens of the same session, at once.',
  })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrorResponses(400, 401)
  async logout(@Body() body: RefreshDto): Promise<void> {
    await this.tokens.revoke(body.refresh);
  }

  @Get('me')
  @Authenticated()
  @ApiOperation({
    summary: 'The signed-in user and their accesses',
    description: 'The user of the access token, whether it is a superuser, and its accesses (seller and permissions).',
  })
  @ApiOkResponse({ type: MeResponseDto })
  me(@CurrentPrincipal() principal: UserPrincipal): Promise<MeResponseDto> {
    return this.users.me(principal.id);
  }

  @Post('passwordrecovery')
  @HttpCode(202)
  @Public()
  @RateLimit('password_recovery')
  @ApiOperation({
    summary: 'Ask for a password recovery code by e-mail (answers 202 whether or not the e-mail exists)',
    description:
      'Sends a 6-digit code to the e-mail when an account exists; the answer is the same either way, so it reveals nothing. A newer request replaces the code. Rate-limited per e-mail.',
  })
  @ApiAcceptedResponse({ type: MessageResponseDto })
  @ApiErrorResponses(400)
  async requestRecovery(@Body() body: PasswordRecoveryRequestDto): Promise<MessageResponseDto> {
    await this.recovery.request(body.email);
    return { message: 'If an account exists for this e-mail, a recovery code has been sent to it.' };
  }

  @Post('passwordrecovery/confirm')
  @HttpCode(200)
  @Public()
  @RateLimit('password_recovery_confirm')
  @ApiOperation({
    summary: 'Set a new password with the e-mailed code; every earlier token stops working',
    description:
      'Sets the new password when the 6-digit code is right (valid 15 minutes, single use, burned after 5 wrong tries); otherwise 400 `invalid_recovery_token`. Every token issued before stops working.',
  })
  @ApiOkResponse({ type: MessageResponseDto })
  @ApiErrorResponses(400)
  async confirmRecovery(@Body() body: PasswordRecoveryConfirmDto): Promise<MessageResponseDto> {
    await this.recovery.confirm(body.email, body.token, body.password);
    return { message: 'Your password has been changed. Sign in with the new password.' };
  }
}
