import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../auth/access.decorators';
import type { Principal, UserPrincipal } from '../auth/principal';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, PageQueryDto, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { AccessesService } from './accesses.service';
import { AccessResponseDto, CreateAccessDto, UpdateAccessDto } from './dto/access.dto';
import { CreateSellerDto, SellerResponseDto, UpdateSellerDto } from './dto/seller.dto';
import { CreateSubaccountDto, SubaccountResponseDto } from './dto/subaccount.dto';
import { SellersService } from './sellers.service';

@ApiTags('sellers')
@Controller('sellers')
export class SellersController {
  constructor(
    private readonly sellers: SellersService,
    private readonly accesses: AccessesService,
  ) {}

  @Post()
  @Authenticated({ superuser: true })
  @Idempotent()
  @ApiOperation({
    summary: 'Create a seller (superusers)',
    description:
      'Creates a seller and its main unified account. `document` is a CPF (11 digits) or CNPJ (14 digits) with its check digits verified; one seller per document (409 otherwise).',
  })
  @ApiCreatedResponse({ type: SellerResponseDto })
  @ApiErrorResponses(400, 409)
  create(@Body() body: CreateSellerDto): Promise<SellerResponseDto> {
    return this.sellers.create(body);
  }

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'Sellers the caller has an access to (all, for superusers)',
    description: 'The sellers the user has an access to, newest first, cursor-paginated; superusers see all.',
  })
  @ApiOkResponse({ type: PageOf(SellerResponseDto) })
  @ApiErrorResponses(400)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto) {
    return this.sellers.list(principal, toPageRequest(query));
  }

  @Get(':id')
  @Authenticated({ seller: 'id' })
  @ApiOperation({
    summary: 'One seller',
    description: 'The seller with its commercial terms (rate plan, split plan, developer account, split participants).',
  })
  @ApiOkResponse({ type: SellerResponseDto })
  get(@Param('id') id: string): Promise<SellerResponseDto> {
    return this.sellers.get(id);
  }

  @Patch(':id')
  @Authenticated({ seller: 'id', permission: 'seller.manage' })
  @ApiOperation({
    summary:
      'Update a seller: `seller.manage` edits name and email; the commercial terms (rate_plan, split_plan, developer_account, split_participants) are for superusers (403 superuser_required)',
    description:
      "`seller.manage` edits `name` and `email`; the commercial terms (`rate_plan`, `split_plan`, `developer_account`, `split_participants`) are the platform's: superusers only (403 `superuser_required`). The split plan must belong to the seller's rate plan. A seller is moved onto an active rate plan only (400 `rate_plan_inactive`; one already on a plan that became inactive keeps it). Ids are answered and audited in lower case, whatever case they were sent in.",
  })
  @ApiOkResponse({ type: SellerResponseDto })
  @ApiErrorResponses(400)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: UpdateSellerDto,
  ): Promise<SellerResponseDto> {
    return this.sellers.update(principal, id, body);
  }

  @Get(':id/subaccounts')
  @Authenticated({ seller: 'id' })
  @ApiOperation({
    summary: "The seller's sub-accounts",
    description: "The seller's sub-accounts (unified accounts under it), newest first.",
  })
  @ApiOkResponse({ type: PageOf(SubaccountResponseDto) })
  @ApiErrorResponses(400)
  listSubaccounts(@Param('id') id: string, @Query() query: PageQueryDto) {
    return this.sellers.listSubaccounts(id, toPageRequest(query));
  }

  @Post(':id/subaccounts')
  @Authenticated({ seller: 'id', permission: 'seller.manage' })
  @Idempotent()
  @ApiOperation({
    summary: 'Create a sub-account (a unified account under the seller)',
    description: 'Creates a sub-account and provisions its virtual account with the same id.',
  })
  @ApiCreatedResponse({ type: SubaccountResponseDto })
  @ApiErrorResponses(400)
  createSubaccount(@Param('id') id: string, @Body() body: CreateSubaccountDto): Promise<SubaccountResponseDto> {
    return this.sellers.createSubaccount(id, body.name);
  }

  @Get(':id/accesses')
  @Authenticated({ seller: 'id', permission: 'accesses.manage' })
  @ApiOperation({
    summary: "The seller's access table",
    description: 'Who can act on the seller and with which permissions.',
  })
  @ApiOkResponse({ type: PageOf(AccessResponseDto) })
  @ApiErrorResponses(400)
  listAccesses(@Param('id') id: string, @Query() query: PageQueryDto) {
    return this.accesses.list(id, toPageRequest(query));
  }

  @Post(':id/accesses')
  @Authenticated({ seller: 'id', permission: 'accesses.manage' })
  @Idempotent()
  @ApiOperation({
    summary:
      'Grant a user permissions on the seller (only permissions the caller holds there: 403 permission_not_grantable)',
    description:
      'Gives a user (by `user` id or `email`) permissions on the seller. A non-superuser grants only permissions it holds itself (403 `permission_not_grantable`); one entry per user and seller (409).',
  })
  @ApiCreatedResponse({ type: AccessResponseDto })
  @ApiErrorResponses(400, 409)
  grant(
    @CurrentPrincipal() principal: UserPrincipal,
    @Param('id') id: string,
    @Body() body: CreateAccessDto,
  ): Promise<AccessResponseDto> {
    return this.accesses.grant(principal, id, body);
  }

  @Patch(':id/accesses/:access_id')
  @Authenticated({ seller: 'id', permission: 'accesses.manage' })
  @ApiOperation({
    summary:
      "Replace an access entry's permissions (not one's own; only permissions the caller holds are added or removed)",
    description:
      "Replaces the entry's permissions. A non-superuser adds and takes away only permissions it holds itself on the seller (403 `permission_not_grantable` naming the others); nobody changes their own entry (403 `own_access_not_changeable`).",
  })
  @ApiOkResponse({ type: AccessResponseDto })
  @ApiErrorResponses(400)
  updateAccess(
    @CurrentPrincipal() principal: UserPrincipal,
    @Param('id') id: string,
    @UuidParam('access_id', 'Access not found.', 'access_not_found') accessId: string,
    @Body() body: UpdateAccessDto,
  ): Promise<AccessResponseDto> {
    return this.accesses.update(principal, id, accessId, body.permissions);
  }

  @Delete(':id/accesses/:access_id')
  @HttpCode(204)
  @Authenticated({ seller: 'id', permission: 'accesses.manage' })
  @ApiOperation({
    summary: "Revoke an access entry (not one's own, nor one holding permissions the caller lacks)",
    description:
      "Removes the user's access to the seller at once. A non-superuser revokes only an entry whose permissions it all holds itself (403 `permission_not_grantable`); nobody deletes their own entry (403 `own_access_not_changeable`).",
  })
  @ApiNoContentResponse({ description: 'Revoked.' })
  async revokeAccess(
    @CurrentPrincipal() principal: UserPrincipal,
    @Param('id') id: string,
    @UuidParam('access_id', 'Access not found.', 'access_not_found') accessId: string,
  ): Promise<void> {
    await this.accesses.revoke(principal, id, accessId);
  }
}
