import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { setRateLimitHeaders } from '../http/rate-limit-headers';
import { rateLimitKey } from './rate-limit-refund';

/**
 * The per-key rate limit: @nestjs/throttler's guard, its storage and exception, counting the API
 * key (set by the key guard, which runs first) rather than the address, with one budget per key
 * across all routes, and this service's headers (setRateLimitHeaders: the contract's
 * X-RateLimit-* and the IETF draft's) rather than its own X-RateLimit-* alone. What it counts is
 * a key: a route without one (`@Public()`: the probes, the MCP endpoint's other methods) is
 * outside the budget, so no route needs throttler's @SkipThrottle().
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /**
   * The stock guard's count for the module's one throttler (app.module.ts: a limit and a window,
   * numbers), where the stock canActivate reads six metadata and awaits three values per request
   * to allow for @Throttle() overrides, which no route of this service has.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    // Routes without a key (the public ones, and the error paths) are limited by the key guard.
    const keyId = request.auth?.keyId;
    if (keyId === undefined) return true;
    const { limit, ttl, name = 'default' } = this.throttlers[0];
    if (typeof limit !== 'number' || typeof ttl !== 'number') {
      throw new Error('The rate limit is configured with numbers (app.module.ts)');
    }
    const key = rateLimitKey(keyId);
    const counted = await this.storageService.increment(key, ttl, limit, ttl, name);
    if (counted.isBlocked) {
      await this.throwThrottlingException(context, { limit, ttl, key, tracker: keyId, ...counted });
    }
    const state = {
      limit,
      remaining: limit - counted.totalHits,
      resetSeconds: counted.timeToExpire,
    };
    // Kept on the request for a 304, whose hit is given back (rate-limit-refund.ts).
    request.rateLimit = state;
    setRateLimitHeaders(context.switchToHttp().getResponse<Response>(), state);
    return true;
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    // The stock guard sets only Retry-After on a 429; the contract wants all the headers.
    setRateLimitHeaders(
      context.switchToHttp().getResponse<Response>(),
      { limit: detail.limit, remaining: 0, resetSeconds: detail.timeToBlockExpire },
      { refused: true },
    );
    return super.throwThrottlingException(context, detail);
  }
}
