import { Logger } from '@nestjs/common';
import Redis, { type RedisOptions } from 'ioredis';

/** The injection token of the Redis connection: a `Redis`, or null when REDIS_URL is unset. */
export const REDIS_CLIENT = Symbol('REDIS_CLIENT');

/*
 * A request never waits for Redis. With the offline queue off, a command sent while the connection
 * is down fails at once (the rate limit then counts locally) instead of queuing until Redis is
 * back; commandTimeout bounds a Redis that accepts commands but does not answer; a command in
 * flight when the connection drops is failed, not sent again (a replayed INCR would count twice).
 */
const FAIL_FAST: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  connectTimeout: 1_000,
  commandTimeout: 500,
  // Reconnects for ever, at most every 2 s, so that the shared count comes back by itself.
  retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
  lazyConnect: true,
  // How long disconnect() waits before destroying the socket. ioredis waits on the socket of the
  // last attempt even when it already failed, holding the process open at shutdown: 2 s by default.
  disconnectTimeout: 200,
};

/**
 * A connection that fails fast, waited for once (at most connectTimeout) so that the first
 * requests are already counted in Redis. A Redis that is down does not stop the start: the
 * connection keeps retrying in the background.
 */
export async function connectRedis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const logger = new Logger('Redis');
  const redis = new Redis(url, { ...FAIL_FAST, ...options });
  // ioredis emits an error for every failed attempt (every 2 s): one warning per outage is enough.
  let reachable = true;
  redis.on('error', (error: Error) => {
    if (!reachable) return;
    reachable = false;
    logger.warn(`Redis unreachable (${error.message}); reconnecting in the background`);
  });
  redis.on('ready', () => {
    if (!reachable) logger.log('Redis reachable again');
    reachable = true;
  });
  await redis.connect().catch(() => undefined);
  return redis;
}

export async function closeRedis(redis: Redis): Promise<void> {
  // QUIT lets the replies in flight arrive; on a connection that is down it would only fail.
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
