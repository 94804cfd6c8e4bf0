import { ExecutionContext, Injectable } from '@nestjs/common';
import {
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerRequest,
} from '@nestjs/throttler';

import type { Request, Response } from 'express';
import { setRateLimitHeaders } from '../http/rate-limit-headers';
import { rateLimitKey } from './rate-limit-refund';

/**
 * The per-key rate limit: @nestjs/throttler's guard, tracking the API key (set by the key guard,
 * which runs first) rather than the address, with one budget per key across all routes.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    // Routes without a key (none in v1 but the error paths) are limited by the key guard instead.
    return Promise.resolve(!context.switchToHttp().getRequest<Request>().auth);
  }

  protected override getTracker(request: Request): Promise<string> {
    return Promise.resolve(request.auth?.keyId ?? '');
  }

  protected override generateKey(_context: ExecutionContext, tracker: string): string {
    return rateLimitKey(tracker);
  }

  /**
   * The stock guard's count, with this service's headers (setRateLimitHeaders: the contract's
   * X-RateLimit-* and the IETF draft's) rather than its own X-RateLimit-* alone.
   */
  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = request;
    const { req, res } = this.getRequestResponse(context);
    const tracker = await getTracker(req, context);
    const key = generateKey(context, tracker, throttler.name ?? 'default');
    const counted = await this.storageService.increment(
      key,
      ttl,
      limit,
      blockDuration,
      throttler.name ?? 'default',
    );
    if (counted.isBlocked) {
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...counted });
    }
    const state = {
      limit,
      remaining: limit - counted.totalHits,
      resetSeconds: counted.timeToExpire,
    };
    // Kept on the request for a 304, whose hit is given back (rate-limit-refund.ts).
    (req as Request).rateLimit = state;
    setRateLimitHeaders(res as Response, state);
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
