import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { InFlightLimitException } from '../http/refusals';
import { InFlightLimiter } from './in-flight-limiter';
import { setInFlightHeaders } from '../http/rate-limit-headers';

/**
 * The in-flight limit per workspace: after the key guard (which names the workspace), before the
 * per-minute limit, so a request refused here costs nothing of its key's budget (it cost the
 * service almost nothing either). It is refused at once, before any statement of its own, with
 * 429 and `Retry-After: 1`; an admitted one counts until its response is over or its client has
 * gone. A request of a key accepted within the last minute was counted at its arrival already
 * (in-flight-on-arrival.ts), and most refusals of a burst come from there, without a statement
 * and before the framework.
 */
@Injectable()
export class InFlightGuard implements CanActivate {
  constructor(private readonly limiter: InFlightLimiter) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const workspaceId = request.auth?.workspace.id;
    if (workspaceId === undefined) return true;
    const response = http.getResponse<Response>();
    if (!this.limiter.countRequest(workspaceId, request, response)) {
      this.limiter.setRefusalHeaders(response);
      throw new InFlightLimitException(this.limiter.limit);
    }
    setInFlightHeaders(response, this.limiter.limit, this.limiter.remaining(workspaceId));
    return true;
  }
}
