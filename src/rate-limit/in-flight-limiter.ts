import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { ServerResponse } from 'node:http';
import { KeyedCounter } from '../common/keyed-counter';
import { Environment } from '../config/environment';
import { setInFlightHeaders } from '../http/rate-limit-headers';
import { IN_FLIGHT_RETRY_AFTER_SECONDS } from '../http/refusals';

declare module 'express-serve-static-core' {
  interface Request {
    /** The workspace whose in-flight limit counts this request, once it does. */
    inFlightFor?: string;
  }
}

/**
 * Counts each workspace's requests in progress on this instance (MAX_IN_FLIGHT_PER_WORKSPACE):
 * per workspace, all its keys together, never per address. Asked by InFlightGuard, and at a
 * request's arrival (in-flight-on-arrival.ts).
 */
@Injectable()
export class InFlightLimiter {
  readonly limit: number;
  private readonly counter = new KeyedCounter();

  constructor(environment: Environment) {
    this.limit = environment.MAX_IN_FLIGHT_PER_WORKSPACE;
  }

  /** Requests in progress on this instance, every workspace together (a metric). */
  get requestsInFlight(): number {
    return this.counter.total;
  }

  /** How many more of the workspace's requests may start now. */
  remaining(workspaceId: string): number {
    return this.limit - this.counter.of(workspaceId);
  }

  /** True when the workspace has its limit in progress: one more would be refused. */
  isFull(workspaceId: string): boolean {
    return this.counter.of(workspaceId) >= this.limit;
  }

  /**
   * Admits one more request of the workspace, or refuses it (false) when it already has `limit`
   * in progress. An admitted request must call the returned release when it ends.
   */
  tryAcquire(workspaceId: string): (() => void) | false {
    return this.isFull(workspaceId) ? false : this.counter.acquire(workspaceId);
  }

  /**
   * Counts the request against its workspace's limit until its response is over or its client has
   * gone ('close' follows both), once however often it is asked; false when the workspace already
   * has its limit in progress.
   */
  countRequest(workspaceId: string, request: Request, response: Response): boolean {
    if (request.inFlightFor === workspaceId) return true;
    const release = this.tryAcquire(workspaceId);
    if (release === false) return false;
    request.inFlightFor = workspaceId;
    // A client that left while its key was being checked: its 'close' has been and gone, and a
    // listener added now would never run, keeping the place taken for good (without this line, 300
    // requests cut at random leave the workspace refused on every request after).
    if (response.closed) release();
    else response.once('close', release);
    return true;
  }

  /** The headers of a refusal: Retry-After, none of the limit left. */
  setRefusalHeaders(response: ServerResponse): void {
    response.setHeader('Retry-After', String(IN_FLIGHT_RETRY_AFTER_SECONDS));
    setInFlightHeaders(response, this.limit, 0);
  }
}
