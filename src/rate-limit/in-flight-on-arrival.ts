import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { announceKeyExpiration } from '../auth/api-key.guard';
import { ApiKeysService } from '../auth/api-keys.service';
import { KeyedRoutes } from '../auth/keyed-routes';
import { RecentKeys } from '../auth/recent-keys';
import { Clock } from '../common/clock';
import { errorEnvelope } from '../http/all-exceptions.filter';
import { InFlightLimitException } from '../http/refusals';
import { setCommonHeaders } from '../http/response-headers';
import { setApiSecurityHeaders } from '../http/security-headers';
import { markRefusal } from '../logging/refusal-reason';
import { InFlightLimiter } from './in-flight-limiter';
import { RefusalTurns } from './refusal-turns';

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A request whose key the database accepted within the last minute (RecentKeys) counts against
 * its workspace's in-flight limit from its arrival, before its key is checked again: within the
 * limit it takes its place and goes on to the application like any other (a key revoked since is
 * still the 401, and its place is given back with its answer); over it, it is refused here. Nothing
 * is admitted here.
 *
 * Counted at arrival, a wave of 300 requests of one workspace makes 20 key checks and 280 refusals
 * without a statement, where counted after the check all 300 would query their key first, and
 * another workspace's key check would wait behind them.
 *
 * The refusal is answered from a request listener of the server, before Express, Nest's router,
 * guards and filter: the same status, envelope, headers and log line as InFlightGuard's, for a
 * fraction of the CPU (docs/benchmarks.md, "Fair share": a burst's refusals are most of its
 * requests).
 */
@Injectable()
export class InFlightOnArrival {
  private readonly turns = new RefusalTurns();

  constructor(
    private readonly keys: ApiKeysService,
    private readonly keyedRoutes: KeyedRoutes,
    private readonly recent: RecentKeys,
    private readonly limiter: InFlightLimiter,
    private readonly clock: Clock,
  ) {}

  /** Puts the count at arrival in front of the server's request listeners (the application). */
  install(server: Server): void {
    const application = server.listeners('request') as Listener[];
    server.removeAllListeners('request');
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      if (this.refuses(request, response)) return;
      for (const listener of application) listener(request, response);
    });
  }

  /** True when the request is refused here (its answer is under way). */
  private refuses(request: IncomingMessage, response: ServerResponse): boolean {
    const method = request.method;
    if (
      (method !== 'GET' && method !== 'HEAD') ||
      !this.keyedRoutes.isKeyedRead(request.url ?? '')
    ) {
      return false;
    }
    const presented = this.keys.presentedKey(request);
    if (presented === undefined) return false;
    const auth = this.recent.find(presented.hash, this.clock.now());
    if (auth === undefined) return false;
    // Express's request and response are these same objects, extended once they reach it.
    const expressRequest = request as Request;
    if (this.limiter.countRequest(auth.workspace.id, expressRequest, response as Response)) {
      return false;
    }
    // For the request's log line (request-log.ts), which its workspace is in.
    expressRequest.auth = auth;
    // The refusal waits its turn behind the requests being served (refusal-turns.ts).
    void this.turns.next().then(() => this.refuse(expressRequest, response));
    return true;
  }

  private refuse(request: Request, response: ServerResponse): void {
    if (response.destroyed) return;
    // What the application's middleware and filter set on this 429 (app.setup.ts, InFlightGuard).
    setApiSecurityHeaders(response);
    setCommonHeaders(request, response);
    if (request.auth) announceKeyExpiration(response, request.auth);
    this.limiter.setRefusalHeaders(response);
    markRefusal(response, 'in_flight_limit');
    const refusal = new InFlightLimitException(this.limiter.limit);
    const body = JSON.stringify(
      errorEnvelope(refusal.getStatus(), refusal.message, request.url ?? ''),
    );
    response.statusCode = refusal.getStatus();
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(body));
    response.end(body);
  }
}
