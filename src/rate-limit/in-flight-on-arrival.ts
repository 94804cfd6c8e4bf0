import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { isWellFormedApiKey } from '../auth/api-key';
import { announceKeyExpiration, bearerKey } from '../auth/api-key.guard';
import { ApiKeysService } from '../auth/api-keys.service';
import { RecentKeys } from '../auth/recent-keys';
import { Clock } from '../common/clock';
import { InFlightLimiter } from './in-flight-limiter';
import { countInFlight, refuseInFlight } from './in-flight.guard';
import { RefusalTurns } from './refusal-turns';

// The endpoints that need a key (every path of them; routing is case-sensitive).
const KEYED_PATH = /^\/v1\/(?:me|companies|leads)(?:\/[^/?]+)?\/?(?:\?|$)/;

/**
 * A request whose key the database accepted within the last minute (RecentKeys) counts against
 * its workspace's in-flight limit from its arrival, before its key is checked again: over the
 * limit, it is refused here with InFlightGuard's 429; within it, it takes its place and goes on to
 * the key guard like any other (a key revoked since is still the 401, and its place is given back
 * with its answer). Nothing is admitted here.
 *
 * Why at arrival and not after the key check: a wave of 300 requests of one workspace arriving
 * together found it with nothing in progress, so all 300 went to the database for their keys
 * before the first was counted. The quiet workspace's key check then waited behind 300 others:
 * 100 ms at p50 during the burst, measured (docs/benchmarks.md, (n)). Counted at arrival, 20 of
 * them query their key and the rest are refused without a statement.
 */
@Injectable()
export class InFlightOnArrival implements NestMiddleware {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly recent: RecentKeys,
    private readonly limiter: InFlightLimiter,
    private readonly clock: Clock,
  ) {}

  private readonly turns = new RefusalTurns();

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    if (!KEYED_PATH.test(request.originalUrl)) return next();
    const key = bearerKey(request);
    if (key === undefined || !isWellFormedApiKey(key)) return next();
    const auth = this.recent.find(this.keys.hash(key), this.clock.now());
    if (auth === undefined) return next();
    if (countInFlight(this.limiter, auth.workspace.id, request, response)) return next();
    // The refusal waits its turn behind the requests being served (refusal-turns.ts).
    await this.turns.next();
    // For the request's log line: the response ends here, nothing else reads it.
    request.auth = auth;
    announceKeyExpiration(response, auth);
    refuseInFlight(response, this.limiter.limit);
  }
}
