import { Injectable } from '@nestjs/common';
import { Environment } from '../config/environment';

/**
 * Counts each workspace's requests in progress on this instance (MAX_IN_FLIGHT_PER_WORKSPACE):
 * per workspace, all its keys together, never per address. A workspace is forgotten once it has
 * none, so the map holds only the workspaces being served now.
 */
@Injectable()
export class InFlightLimiter {
  readonly limit: number;
  private readonly inFlight = new Map<string, number>();
  private total = 0;

  constructor(environment: Environment) {
    this.limit = environment.MAX_IN_FLIGHT_PER_WORKSPACE;
  }

  /** Requests in progress on this instance, every workspace together (a metric). */
  get requestsInFlight(): number {
    return this.total;
  }

  /** How many more of the workspace's requests may start now. */
  remaining(workspaceId: string): number {
    return this.limit - (this.inFlight.get(workspaceId) ?? 0);
  }

  /** True when the workspace has its limit in progress: one more would be refused. */
  isFull(workspaceId: string): boolean {
    return (this.inFlight.get(workspaceId) ?? 0) >= this.limit;
  }

  /**
   * Admits one more request of the workspace, or refuses it (false) when it already has `limit`
   * in progress. An admitted request must call the returned release exactly once, when it ends.
   */
  tryAcquire(workspaceId: string): (() => void) | false {
    const count = this.inFlight.get(workspaceId) ?? 0;
    if (count >= this.limit) return false;
    this.inFlight.set(workspaceId, count + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.inFlight.get(workspaceId) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(workspaceId);
      else this.inFlight.set(workspaceId, left);
    };
  }
}
