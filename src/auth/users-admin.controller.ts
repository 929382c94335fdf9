import { Body, Controller, Get, Patch, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PageOf, toPageRequest } from '../common/pagination/pagination';
import { UuidParam } from '../common/validation/uuid-param';
import { ApiErrorResponses } from '../openapi/api-error-responses.decorator';
import { Authenticated, CurrentPrincipal } from './access.decorators';
import { AdminUpdateUserDto, AdminUserResponseDto, ListUsersQueryDto } from './dto/admin-user.dto';
import type { UserPrincipal } from './principal';
import { UsersAdminService } from './users-admin.service';

@ApiTags('users admin')
@Controller('users')
@Authenticated({ superuser: true })
export class UsersAdminController {
  constructor(private readonly admin: UsersAdminService) {}

  @Get()
  @ApiOperation({
    summary: 'Users, newest first; `search` filters by e-mail (superusers)',
    description: 'Every user account, newest first, cursor-paginated; `search` matches part of the e-mail.',
  })
  @ApiOkResponse({ type: PageOf(AdminUserResponseDto) })
  @ApiErrorResponses(400)
  list(@Query() query: ListUsersQueryDto) {
    return this.admin.list(toPageRequest(query), query.search);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One user (superusers)',
    description: 'The user account with its state (`active`, `is_superuser`).',
  })
  @ApiOkResponse({ type: AdminUserResponseDto })
  @ApiErrorResponses(404)
  get(@UuidParam('id', 'User not found.', 'user_not_found') id: string): Promise<AdminUserResponseDto> {
    return this.admin.get(id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Activate or deactivate a user (its tokens stop at once), grant or revoke superuser (superusers)',
    description:
      'Sets `active` (a deactivated user cannot log in, its tokens stop working at once and a password recovery code sent to it is burnt) or `is_superuser`. Every change is written to the audit log.',
  })
  @ApiOkResponse({ type: AdminUserResponseDto })
  @ApiErrorResponses(400, 404)
  update(
    @CurrentPrincipal() principal: UserPrincipal,
    @UuidParam('id', 'User not found.', 'user_not_found') id: string,
    @Body() body: AdminUpdateUserDto,
  ): Promise<AdminUserResponseDto> {
    return this.admin.update(principal, id, body);
  }
}
