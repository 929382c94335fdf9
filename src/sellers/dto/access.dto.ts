import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayUnique, IsArray, IsIn, IsUUID } from 'class-validator';
import { IsOmittable } from '../../common/validation/optional.decorator';
import { Permission, PERMISSIONS } from '../../auth/permissions';
import type { Access } from '../entities/access.entity';
import { EmailField } from '../../common/validation/email.decorator';

export class CreateAccessDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'The user, by id (or give `email`).' })
  @IsOmittable()
  @IsUUID('all', { message: 'must be a UUID' })
  user?: string;

  @ApiPropertyOptional({ description: 'The user, by e-mail (or give `user`).' })
  @IsOmittable()
  @EmailField()
  email?: string;

  @ApiProperty({ enum: PERMISSIONS, isArray: true })
  @IsArray()
  @ArrayUnique({ message: 'must not repeat a permission' })
  @IsIn(PERMISSIONS, { each: true, message: `each value must be one of ${PERMISSIONS.join(', ')}` })
  permissions: Permission[];
}

export class UpdateAccessDto {
  @ApiProperty({ enum: PERMISSIONS, isArray: true })
  @IsArray()
  @ArrayUnique({ message: 'must not repeat a permission' })
  @IsIn(PERMISSIONS, { each: true, message: `each value must be one of ${PERMISSIONS.join(', ')}` })
  permissions: Permission[];
}

export class AccessResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty({ format: 'uuid' }) user: string;
  @ApiProperty({ enum: PERMISSIONS, isArray: true }) permissions: Permission[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static of(access: Access): AccessResponseDto {
    return {
      id: access.id,
      seller: access.sellerId,
      user: access.userId,
      permissions: access.permissions,
      created_at: access.createdAt.toISOString(),
      updated_at: access.updatedAt.toISOString(),
    };
  }
}
