import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/pagination';
import { IsOmittable } from '../../common/validation/optional.decorator';
import type { User } from '../entities/user.entity';

export class ListUsersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: '@loja.example', description: 'Users whose e-mail contains this text.' })
  @IsOptional()
  @IsString()
  @MaxLength(254)
  search?: string;
}

export class AdminUpdateUserDto {
  @ApiPropertyOptional({ description: 'false: the user cannot log in and its tokens stop working at once.' })
  @IsOmittable()
  @IsBoolean({ message: 'must be true or false' })
  active?: boolean;

  @ApiPropertyOptional()
  @IsOmittable()
  @IsBoolean({ message: 'must be true or false' })
  is_superuser?: boolean;
}

export class AdminUserResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty() name: string;
  @ApiProperty() is_superuser: boolean;
  @ApiProperty() active: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(user: User): AdminUserResponseDto {
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      is_superuser: user.isSuperuser,
      active: user.active,
      created_at: user.createdAt.toISOString(),
      updated_at: user.updatedAt.toISOString(),
    };
  }
}
