import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { APP_CONFIG, AppConfig } from '../config/config';
import { MailModule } from '../mail/mail.module';
import { SellersModule } from '../sellers/sellers.module';
import { AccessGuard } from './access.guard';
import { AuthenticationGuard } from './authentication.guard';
import { AuthorizationModule } from './authorization.module';
import { PasswordRecoveriesRepository } from './password-recoveries.repository';
import { PasswordRecoveryService } from './password-recovery.service';
import { RefreshTokensRepository } from './refresh-tokens.repository';
import { ApiKeyStrategy } from './strategies/api-key.strategy';
import { JwtStrategy } from './strategies/jwt.strategy';
import { TokensService } from './tokens.service';
import { UsersAdminController } from './users-admin.controller';
import { UsersAdminService } from './users-admin.service';
import { UsersController } from './users.controller';
import { UsersModule } from './users.module';
import { UsersService } from './users.service';

/**
 * Authentication (JWT sessions, seller API keys), the global access guard, password recovery
 * and the users admin. Authorisation decisions live in AuthorizationModule (re-exported here
 * for modules whose checks their routes cannot state in `@Authenticated`).
 */
@Module({
  imports: [
    UsersModule,
    SellersModule,
    ApiKeysModule,
    MailModule,
    AuthorizationModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ secret: config.jwtSecret, signOptions: { algorithm: 'HS256' } }),
    }),
  ],
  controllers: [UsersController, UsersAdminController],
  providers: [
    RefreshTokensRepository,
    PasswordRecoveriesRepository,
    TokensService,
    UsersService,
    UsersAdminService,
    PasswordRecoveryService,
    JwtStrategy,
    ApiKeyStrategy,
    AuthenticationGuard,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AuthorizationModule, UsersService],
})
export class AuthModule {}
