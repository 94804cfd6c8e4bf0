import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { ServerResponse } from 'node:http';
import { InFlightLimitException } from '../http/refusals';
import { InFlightLimiter } from './in-flight-limiter';
import { setInFlightHeaders } from '../http/rate-limit-headers';

/** A refused request may try again this soon: requests of 10 to 500 ms will have ended by then. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

declare module 'express-serve-static-core' {
  interface Request {
    /** The workspace whose in-flight limit counts this request, once it does. */
    inFlightFor?: string;
  }
}

/**
 * Counts the request against its workspace's in-flight limit until its response is over or its
 * client has gone ('close' follows both), once however often it is asked; false when the
 * workspace already has its limit in progress.
 */
export function countInFlight(
  limiter: InFlightLimiter,
  workspaceId: string,
  request: Request,
  response: Response,
): boolean {
  if (request.inFlightFor === workspaceId) return true;
  const release = limiter.tryAcquire(workspaceId);
  if (release === false) return false;
  request.inFlightFor = workspaceId;
  // A client that left while its key was being checked: its 'close' has been and gone, and a
  // listener added now would never run, keeping the place taken for good (without this line, 300
  // requests cut at random leave the workspace refused on every request after).
  if (response.closed) release();
  else response.once('close', release);
  return true;
}

/** The headers of a refusal for the in-flight limit: `Retry-After: 1`, none of it left. */
export function refusalHeaders(response: ServerResponse, limit: number): void {
  response.setHeader('Retry-After', String(IN_FLIGHT_RETRY_AFTER_SECONDS));
  setInFlightHeaders(response, limit, 0);
}

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
    if (!countInFlight(this.limiter, workspaceId, request, response)) {
      refusalHeaders(response, this.limiter.limit);
      throw new InFlightLimitException(this.limiter.limit);
    }
    setInFlightHeaders(response, this.limiter.limit, this.limiter.remaining(workspaceId));
    return true;
  }
}
