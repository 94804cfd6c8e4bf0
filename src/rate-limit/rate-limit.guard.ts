import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';

import type { Request, Response } from 'express';
import { setRateLimitHeaders } from './rate-limit-headers';

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
    return `api-key:${tracker}`;
  }

  protected override throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    // The stock guard sets only Retry-After on a 429; the contract wants all the headers.
    setRateLimitHeaders(context.switchToHttp().getResponse<Response>(), {
      limit: detail.limit,
      remaining: 0,
      resetSeconds: detail.timeToBlockExpire,
    });
    return super.throwThrottlingException(context, detail);
  }
}
