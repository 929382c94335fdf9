import { ApiProperty } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { IsString, MaxLength, MinLength, validateSync } from 'class-validator';
import { PERMISSIONS, Permission } from '../permissions';
import { IsNotBlank } from '../../common/validation/not-blank.decorator';
import { flatten } from '../../common/validation/validation.pipe';
import { EmailField } from '../../common/validation/email.decorator';
import { IsOneLine } from '../../common/validation/one-line.decorator';

export class RegisterDto {
  @ApiProperty({ example: 'ana@loja.example' })
  @EmailField()
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 128, example: 'correct horse battery' })
  @IsString()
  @MinLength(8, { message: 'must be 8 to 128 characters' })
  @MaxLength(128, { message: 'must be 8 to 128 characters' })
  password: string;

  @ApiProperty({ example: 'Ana Souza' })
  @IsString()
  @IsNotBlank()
  @MaxLength(200)
  @IsOneLine()
  name: string;
}

/**
 * What the API would refuse in these user fields, as RegisterDto checks them (for callers that
 * are not HTTP requests: the create-superuser command), one line per problem naming the field.
 */
export function registrationProblems(fields: { email: string; password: string; name: string }): string[] {
  const errors = flatten(validateSync(plainToInstance(RegisterDto, fields)));
  return Object.entries(errors).flatMap(([field, messages]) => messages.map((message) => `${field} ${message}`));
}

export class LoginDto {
  @ApiProperty({ example: 'ana@loja.example' })
  @IsString()
  @MaxLength(254)
  email: string;

  @ApiProperty({ example: 'correct horse battery' })
  @IsString()
  @MaxLength(1024)
  password: string;
}

export class RefreshDto {
  @ApiProperty({ description: 'The refresh token from login.' })
  @IsString()
  @MaxLength(4096)
  refresh: string;
}

export class PasswordRecoveryRequestDto {
  @ApiProperty({ example: 'ana@loja.example' })
  @EmailField()
  email: string;
}

export class PasswordRecoveryConfirmDto {
  @ApiProperty({ example: 'ana@loja.example' })
  @EmailField()
  email: string;

  @ApiProperty({
    example: '482913',
    description:
      'The 6-digit code from the e-mail. Any other string is a wrong code: 400 `invalid_recovery_token`, and it counts as one of the 5 tries.',
  })
  @IsString()
  token: string;

  @ApiProperty({ minLength: 8, maxLength: 128 })
  @IsString()
  @MinLength(8, { message: 'must be 8 to 128 characters' })
  @MaxLength(128, { message: 'must be 8 to 128 characters' })
  password: string;
}

export class UserResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty() name: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class UserAccessDto {
  @ApiProperty({ format: 'uuid' }) seller: string;
  @ApiProperty({ enum: PERMISSIONS, isArray: true }) permissions: Permission[];
}

export class MeResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty() name: string;
  @ApiProperty() is_superuser: boolean;
  @ApiProperty({ type: [UserAccessDto] }) accesses: UserAccessDto[];
}

export class SessionResponseDto {
  @ApiProperty({ description: 'Short-lived bearer token (default 1 day).' }) access: string;
  @ApiProperty({ description: 'Long-lived token (default 4 days), only for POST /user/token/refresh/.' })
  refresh: string;
  @ApiProperty({ example: 86400, description: 'Seconds for which `access` is valid; renew before.' })
  access_token_renew_interval: number;
}

export class AccessTokenResponseDto {
  @ApiProperty() access: string;
  @ApiProperty({ example: 86400 }) access_token_renew_interval: number;
}

export class MessageResponseDto {
  @ApiProperty() message: string;
}
