import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { isWellFormedApiKey } from '../auth/api-key';
import { announceKeyExpiration, bearerKey } from '../auth/api-key.guard';
import { ApiKeysService } from '../auth/api-keys.service';
import { RecentKeys } from '../auth/recent-keys';
import { Clock } from '../common/clock';
import { InFlightLimiter } from './in-flight-limiter';
import { refuseInFlight } from './in-flight.guard';

// The endpoints that need a key (every path of them; routing is case-sensitive).
const KEYED_PATH = /^\/v1\/(?:me|companies|leads)(?:\/[^/?]+)?\/?(?:\?|$)/;

/**
 * The in-flight limit's refusals of a burst, made before the key's database check: a request whose
 * key the database accepted within the last minute (RecentKeys), of a workspace that already has
 * its limit in progress, is refused here with the same 429 as InFlightGuard's. A burst's refusals
 * then cost no statement and little CPU, so that they do not take the capacity of the other
 * workspaces; measured in docs/benchmarks.md, (n). Nothing is ever admitted here: every other
 * request goes on to the key guard.
 */
@Injectable()
export class InFlightRefusal implements NestMiddleware {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly recent: RecentKeys,
    private readonly limiter: InFlightLimiter,
    private readonly clock: Clock,
  ) {}

  use(request: Request, response: Response, next: NextFunction): void {
    if (!KEYED_PATH.test(request.originalUrl)) return next();
    const key = bearerKey(request);
    if (key === undefined || !isWellFormedApiKey(key)) return next();
    const auth = this.recent.find(this.keys.hash(key), this.clock.now());
    if (auth === undefined || !this.limiter.isFull(auth.workspace.id)) return next();
    // For the request's log line: the response ends here, nothing else reads it.
    request.auth = auth;
    announceKeyExpiration(response, auth);
    refuseInFlight(response, this.limiter.limit);
  }
}
