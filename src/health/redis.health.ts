import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type Redis from 'ioredis';
import { REDIS_CLIENT } from '../redis/redis-client';
import { pingCheck } from './ping-check';

const TIMEOUT_MS = 1_000;

/** PING on the connection of the shared rate limit, when there is one (REDIS_URL). */
@Injectable()
export class RedisHealthIndicator {
  constructor(
    @Inject(REDIS_CLIENT) private readonly redis: Redis | null,
    private readonly health: HealthIndicatorService,
  ) {}

  get isConfigured(): boolean {
    return this.redis !== null;
  }

  pingCheck<Key extends string>(key: Key) {
    const redis = this.redis;
    return pingCheck(
      this.health,
      key,
      () => (redis ? redis.ping() : Promise.reject(new Error('REDIS_URL is not set'))),
      TIMEOUT_MS,
    );
  }
}
