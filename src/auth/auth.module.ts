import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { ApiKeysModule } from '../api-keys/api-keys.module';
import { APP_CONFIG, AppConfig } from '../config/config';
import { MailModule } from '../mail/mail.module';
import { SellersModule } from '../sellers/sellers.module';
import { AccessGuard } from './access.guard';
import { AuthorizationService } from './authorization.service';
import { PasswordRecoveryService } from './password-recovery.service';
import { ApiKeyStrategy } from './strategies/api-key.strategy';
import { JwtStrategy } from './strategies/jwt.strategy';
import { TokensService } from './tokens.service';
import { UsersController } from './users.controller';
import { UsersModule } from './users.module';
import { UsersService } from './users.service';

/**
 * Authentication (JWT sessions, seller API keys), the global access guard and password
 * recovery. Other modules use AuthorizationService for checks their routes cannot
 * state in `@Authenticated` (a seller known only from the record).
 */
@Module({
  imports: [
    UsersModule,
    SellersModule,
    ApiKeysModule,
    MailModule,
    PassportModule,
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ secret: config.jwtSecret, signOptions: { algorithm: 'HS256' } }),
    }),
  ],
  controllers: [UsersController],
  providers: [
    TokensService,
    UsersService,
    PasswordRecoveryService,
    AuthorizationService,
    JwtStrategy,
    ApiKeyStrategy,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AuthorizationService, UsersService],
})
export class AuthModule {}
