import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { setRateLimitHeaders, type RateLimitState } from '../http/rate-limit-headers';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by RateLimitGuard: the key's budget as this request left it. */
    rateLimit?: RateLimitState;
  }
}

/** The storage key of an API key's per-minute budget (RateLimitGuard counts under it). */
export function rateLimitKey(keyId: string): string {
  return `api-key:${keyId}`;
}

interface Refundable {
  refund(key: string): Promise<void>;
}

/** Gives back one hit, if the storage can (this service's storages can: memory, Redis, fail-open). */
export async function refundHit(storage: ThrottlerStorage, key: string): Promise<void> {
  if ('refund' in storage) await (storage as ThrottlerStorage & Refundable).refund(key);
}

/**
 * A 304 is not counted against the key's per-minute budget (GitHub's rule, what makes polling
 * with ETags cheap): the request was counted on arrival, as any other, and its hit is given back
 * once it is known to be a 304, with the rate-limit headers saying so. A conditional request
 * still needs room in the budget when it arrives: past the limit it is a 429 like any other.
 */
@Injectable()
export class RateLimitRefund {
  constructor(@InjectThrottlerStorage() private readonly storage: ThrottlerStorage) {}

  async refund(request: Request, response: Response): Promise<void> {
    const { auth, rateLimit } = request;
    if (!auth || !rateLimit) return;
    await refundHit(this.storage, rateLimitKey(auth.keyId));
    request.rateLimit = { ...rateLimit, remaining: rateLimit.remaining + 1 };
    setRateLimitHeaders(response, request.rateLimit);
  }
}
