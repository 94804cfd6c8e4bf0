import { Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthFailureLimiter } from './auth/auth-failure-limiter';
import { AuthModule } from './auth/auth.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { Clock, ClockModule } from './common/clock';
import { FixedWindowThrottlerStorage } from './common/fixed-window-throttler.storage';
import { RateLimitGuard } from './common/rate-limit.guard';
import { CompaniesModule } from './companies/companies.module';
import { ConfigModule } from './config/config.module';
import { Environment } from './config/environment';
import { LeadsModule } from './leads/leads.module';
import { MeModule } from './me/me.module';
import { PrismaModule } from './prisma/prisma.module';

const RATE_LIMIT_WINDOW_MS = 60_000;

@Module({
  imports: [
    ConfigModule,
    ClockModule,
    PrismaModule,
    ThrottlerModule.forRootAsync({
      inject: [Environment, Clock],
      useFactory: (environment: Environment, clock: Clock) => ({
        throttlers: [{ ttl: RATE_LIMIT_WINDOW_MS, limit: environment.RATE_LIMIT_PER_MINUTE }],
        storage: new FixedWindowThrottlerStorage(clock),
      }),
    }),
    AuthModule,
    MeModule,
    CompaniesModule,
    LeadsModule,
  ],
  providers: [
    AuthFailureLimiter,
    // Guards run in this order: the key first (so the rate limit knows whose budget to charge),
    // then the per-key rate limit, then validation (APP_PIPE): a bad key with bad parameters is 401.
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    {
      provide: APP_PIPE,
      useValue: new ValidationPipe({
        transform: true,
        whitelist: true,
        forbidNonWhitelisted: true,
        stopAtFirstError: true,
      }),
    },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
