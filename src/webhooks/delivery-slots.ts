/**
 * The worker's delivery capacity, shared out by endpoint: at most `capacity` attempts in flight in
 * the worker, and at most `perEndpoint` of them for any one endpoint. An endpoint that hangs,
 * answers slowly or fails holds at most its own share; the rest stays free for the others. Jobs
 * fetched but not yet started hold `pending` places, so the worker never fetches more than it can
 * start.
 */
export class DeliverySlots {
  private readonly inFlight = new Map<string, { count: number; since: number[] }>();
  private total = 0;
  private pending = 0;
  private waiters: (() => void)[] = [];

  constructor(
    readonly capacity: number,
    readonly perEndpoint: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Places free for jobs to fetch. */
  get room(): number {
    return Math.max(0, this.capacity - this.total - this.pending);
  }

  /** Attempts in flight, every endpoint together. */
  get attempts(): number {
    return this.total;
  }

  /** Holds places for `count` jobs being fetched or looked at. */
  hold(count: number): void {
    this.pending += count;
  }

  /** Gives held places back (their jobs were not for sending now). */
  unhold(count: number): void {
    this.pending -= count;
    this.wake();
  }

  /**
   * Turns one held place into an attempt for the endpoint, unless it has its share in flight:
   * returns when it started (to give to finish), or false.
   */
  tryStart(endpointId: string): number | false {
    const endpoint = this.inFlight.get(endpointId) ?? { count: 0, since: [] };
    if (endpoint.count >= this.perEndpoint) return false;
    const startedAt = this.now();
    endpoint.count++;
    endpoint.since.push(startedAt);
    this.inFlight.set(endpointId, endpoint);
    this.total++;
    this.pending--;
    return startedAt;
  }

  /** The endpoint's attempt started at `startedAt` is over and recorded. */
  finish(endpointId: string, startedAt: number): void {
    const endpoint = this.inFlight.get(endpointId);
    if (endpoint === undefined) return;
    endpoint.count--;
    endpoint.since.splice(endpoint.since.indexOf(startedAt), 1);
    if (endpoint.count === 0) this.inFlight.delete(endpointId);
    this.total--;
    this.wake();
  }

  /** How long the endpoint's oldest attempt in flight has been going, in ms (0: none). */
  oldestAttemptMs(endpointId: string): number {
    const since = this.inFlight.get(endpointId)?.since[0];
    return since === undefined ? 0 : this.now() - since;
  }

  /** Resolves once a place may have been freed. */
  freed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
