import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { PageOf, PageQueryDto, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyResponseDto, CreateApiKeyDto, CreatedApiKeyResponseDto, UpdateApiKeyDto } from './dto/api-key.dto';

const access = { seller: 'seller_id', permission: 'apikeys.manage', unknownSellerIsBadRequest: true } as const;

@ApiTags('api keys')
@Controller('integrations/apikeys/:seller_id/apikeys')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @Authenticated(access)
  @Idempotent({ secret: true })
  @ApiOperation({
    summary: 'Create a seller API key (the secret is shown only in this response)',
    description:
      "Creates an API key for the seller's backend. `key` (a UUID4 secret, stored only as a hash) is in this answer and never again; a replay with the same Idempotency-Key answers 409 `idempotency_secret_not_replayable`. An unknown seller answers 400 `Seller not found.` A key acts as its seller with no permission list, whatever its creator's permissions: it reads the seller's transactions and, through webhooks, receives every event of the seller (postings, orders, subscriptions). Grant `apikeys.manage` only to users trusted with that; a key outlives its creator's access until it is deactivated or deleted.",
  })
  @ApiCreatedResponse({ type: CreatedApiKeyResponseDto })
  @ApiErrorResponses(400, 409, 422)
  create(@Param('seller_id') sellerId: string, @Body() body: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    return this.keys.create(sellerId, body);
  }

  @Get()
  @Authenticated(access)
  @ApiOperation({
    summary: "List the seller's API keys (never the secret)",
    description:
      "The seller's API keys, newest first, with the last 4 characters of each key and when it was last used; never the key itself.",
  })
  @ApiOkResponse({ type: PageOf(ApiKeyResponseDto) })
  @ApiErrorResponses(400)
  list(@Param('seller_id') sellerId: string, @Query() query: PageQueryDto) {
    return this.keys.list(sellerId, toPageRequest(query));
  }

  @Get(':id')
  @Authenticated(access)
  @ApiOperation({
    summary: 'One API key (never the secret)',
    description: 'One API key of the seller, without its secret.',
  })
  @ApiOkResponse({ type: ApiKeyResponseDto })
  @ApiErrorResponses(400, 404)
  get(
    @Param('seller_id') sellerId: string,
    @UuidParam('id', 'API key not found.', 'api_key_not_found') id: string,
  ): Promise<ApiKeyResponseDto> {
    return this.keys.get(sellerId, id);
  }

  @Patch(':id')
  @Authenticated(access)
  @ApiOperation({
    summary: 'Update label, description or active (reactivate an inactive key)',
    description: 'Changes `label`, `description` or `active`; an inactive key is refused (401) until reactivated.',
  })
  @ApiOkResponse({ type: ApiKeyResponseDto })
  @ApiErrorResponses(400, 404)
  update(
    @Param('seller_id') sellerId: string,
    @UuidParam('id', 'API key not found.', 'api_key_not_found') id: string,
    @Body() body: UpdateApiKeyDto,
  ): Promise<ApiKeyResponseDto> {
    return this.keys.update(sellerId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @Authenticated(access)
  @ApiOperation({
    summary: 'Delete an API key; it stops working at once',
    description: 'Deletes the key; requests made with it answer 401 from then on.',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrorResponses(400, 404)
  async remove(
    @Param('seller_id') sellerId: string,
    @UuidParam('id', 'API key not found.', 'api_key_not_found') id: string,
  ): Promise<void> {
    await this.keys.remove(sellerId, id);
  }
}
