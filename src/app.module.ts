import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ScopeGuard } from './auth/scope.guard';
import { AuthFailureLimiter } from './auth/auth-failure-limiter';
import { AuthModule } from './auth/auth.module';
import { AllExceptionsFilter } from './http/all-exceptions.filter';
import { Clock, ClockModule } from './common/clock';
import { DrainingModule } from './common/draining';
import { FailOpenThrottlerStorage } from './rate-limit/fail-open-throttler.storage';
import { FixedWindowThrottlerStorage } from './rate-limit/fixed-window-throttler.storage';
import { InFlightGuard } from './rate-limit/in-flight.guard';
import { InFlightModule } from './rate-limit/in-flight.module';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { RedisThrottlerStorage } from './rate-limit/redis-throttler.storage';
import { StrictValidationPipe, VALIDATION_OPTIONS } from './http/strict-validation.pipe';
import { CompaniesModule } from './companies/companies.module';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { Environment } from './config/environment';
import { HealthModule } from './health/health.module';
import { LeadsModule } from './leads/leads.module';
import { LoggingModule } from './logging/logging.module';
import { McpModule } from './mcp/mcp.module';
import { MeModule } from './me/me.module';
import { MetricsModule } from './metrics/metrics.module';
import { REDIS_CLIENT } from './redis/redis-client';
import { RedisModule } from './redis/redis.module';
import { VisitsModule } from './visits/visits.module';

const RATE_LIMIT_WINDOW_MS = 60_000;

@Module({
  imports: [
    ConfigModule,
    LoggingModule,
    ClockModule,
    DrainingModule,
    DatabaseModule,
    RedisModule,
    // One store for the per-key limit and the auth-failure limiter: Redis when configured (shared
    // by every instance, falling back to the local count while it fails), else this process's.
    ThrottlerModule.forRootAsync({
      inject: [Environment, Clock, REDIS_CLIENT],
      useFactory: (environment: Environment, clock: Clock, redis: Redis | null) => ({
        throttlers: [{ ttl: RATE_LIMIT_WINDOW_MS, limit: environment.RATE_LIMIT_PER_MINUTE }],
        storage: redis
          ? new FailOpenThrottlerStorage(
              new RedisThrottlerStorage(redis),
              new FixedWindowThrottlerStorage(clock),
              clock,
            )
          : new FixedWindowThrottlerStorage(clock),
      }),
    }),
    InFlightModule,
    AuthModule,
    MeModule,
    CompaniesModule,
    LeadsModule,
    VisitsModule,
    HealthModule,
    MetricsModule,
    McpModule,
  ],
  providers: [
    AuthFailureLimiter,
    // Guards run in this order: the key first (so the limits know whose budget to charge), then
    // the workspace's in-flight limit (its refusals cost nothing of the per-minute budget), then
    // the per-key rate limit, then validation (APP_PIPE): a bad key with bad parameters is 401.
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: ScopeGuard },
    { provide: APP_GUARD, useClass: InFlightGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
    {
      provide: APP_PIPE,
      useValue: new StrictValidationPipe(VALIDATION_OPTIONS),
    },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
