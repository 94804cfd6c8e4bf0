import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { Environment } from '../config/environment';
import { closeRedis, connectRedis, REDIS_CLIENT } from './redis-client';

/** The Redis connection of the shared rate limit and the readiness check, if REDIS_URL is set. */
@Global()
@Module({
  providers: [
    {
      provide: REDIS_CLIENT,
      inject: [Environment],
      useFactory: (environment: Environment): Promise<Redis> | null =>
        environment.REDIS_URL ? connectRedis(environment.REDIS_URL) : null,
    },
  ],
  exports: [REDIS_CLIENT],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS_CLIENT) private readonly redis: Redis | null) {}

  // On shutdown rather than on destroy: requests still being answered keep their shared count.
  async onApplicationShutdown(): Promise<void> {
    if (this.redis) await closeRedis(this.redis);
  }
}
