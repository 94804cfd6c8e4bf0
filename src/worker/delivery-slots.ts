/*
 * An endpoint is slow once its oldest attempt in flight has lasted this long: a receiver that
 * answers at all answers most requests in well under a second. Its jobs then stop waiting in the
 * worker (they go back to the queue for later), so that they cannot hold the worker's places.
 */
export const SLOW_ATTEMPT_MS = 1_000;

/** Where a fetched job goes: started now (when), or kept to wait, or sent back to the queue. */
export type Admission = { startedAt: number } | 'wait' | 'defer';

interface EndpointState<J> {
  /** Start times of the endpoint's attempts in flight (their HTTP exchanges). */
  open: number[];
  /** Jobs fetched for it, waiting for one of its attempts to end. */
  waiting: J[];
}

/**
 * The worker's delivery capacity, shared out by endpoint.
 *
 * - At most `capacity` jobs are held by the worker at once (fetched and not yet recorded: in
 *   flight, waiting here for their endpoint, or being recorded), which bounds its memory.
 * - At most `perEndpoint` attempts of one endpoint are in flight at once. A job of an endpoint
 *   that has them waits here and starts as soon as one of them ends, so that a fast endpoint with a
 *   backlog is served at its own pace, without a trip back to the queue.
 * - An endpoint is slow once its oldest attempt in flight has lasted SLOW_ATTEMPT_MS: its jobs do
 *   not wait here (those that did are taken back out): they go back to the queue for later. So an
 *   endpoint that hangs holds its `perEndpoint` places, and for at most SLOW_ATTEMPT_MS some more;
 *   the rest of the capacity stays with the other endpoints.
 */
export class DeliverySlots<J> {
  private readonly endpoints = new Map<string, EndpointState<J>>();
  private held = 0;
  private waiters: (() => void)[] = [];

  constructor(
    readonly capacity: number,
    readonly perEndpoint: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Places free for jobs to fetch. */
  get room(): number {
    return Math.max(0, this.capacity - this.held);
  }

  /** Holds places for `count` jobs about to be fetched. */
  hold(count: number): void {
    this.held += count;
  }

  /** Gives back the places of `count` jobs that are done with (recorded, deferred, gone). */
  release(count = 1): void {
    this.held -= count;
    if (count > 0) this.wake();
  }

  /**
   * Where a fetched job of the endpoint goes: started (an attempt opens now: call attemptEnded with
   * its `startedAt` when its exchange ends), `wait` (kept here until one of its endpoint's attempts
   * ends), or `defer` (the endpoint is slow: back to the queue).
   */
  admit(endpointId: string, job: J): Admission {
    const endpoint = this.stateOf(endpointId);
    if (endpoint.open.length < this.perEndpoint) {
      const startedAt = this.now();
      endpoint.open.push(startedAt);
      return { startedAt };
    }
    if (this.isSlow(endpoint)) return 'defer';
    endpoint.waiting.push(job);
    return 'wait';
  }

  /**
   * The exchange of the endpoint's attempt that started at `startedAt` is over (its recording is
   * the worker's, not the endpoint's): the next job waiting for the endpoint, now started, if any.
   */
  attemptEnded(
    endpointId: string,
    startedAt: number,
    takeNext = true,
  ): { job: J; startedAt: number } | undefined {
    const endpoint = this.endpoints.get(endpointId);
    if (endpoint === undefined) return undefined;
    endpoint.open.splice(endpoint.open.indexOf(startedAt), 1);
    const job = takeNext ? endpoint.waiting.shift() : undefined;
    if (job !== undefined) {
      const now = this.now();
      endpoint.open.push(now);
      return { job, startedAt: now };
    }
    if (endpoint.open.length === 0 && endpoint.waiting.length === 0) {
      this.endpoints.delete(endpointId);
    }
    return undefined;
  }

  /** How long the endpoint's oldest attempt in flight has been going, in ms (0: none). */
  oldestAttemptMs(endpointId: string): number {
    const open = this.endpoints.get(endpointId)?.open ?? [];
    return open.length === 0 ? 0 : this.now() - Math.min(...open);
  }

  /**
   * The jobs waiting for endpoints that have become slow (or for any endpoint, with `all`, when
   * the worker stops), taken out to go back to the queue.
   */
  takeWaitingOfSlowEndpoints(all = false): { endpointId: string; jobs: J[] }[] {
    const taken: { endpointId: string; jobs: J[] }[] = [];
    for (const [endpointId, endpoint] of this.endpoints) {
      if (endpoint.waiting.length > 0 && (all || this.isSlow(endpoint))) {
        taken.push({ endpointId, jobs: endpoint.waiting });
        endpoint.waiting = [];
      }
    }
    return taken;
  }

  /** Resolves once a place may have been freed. */
  freed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private isSlow(endpoint: EndpointState<J>): boolean {
    const oldest = endpoint.open.length === 0 ? undefined : Math.min(...endpoint.open);
    return oldest !== undefined && this.now() - oldest >= SLOW_ATTEMPT_MS;
  }

  private stateOf(endpointId: string): EndpointState<J> {
    let endpoint = this.endpoints.get(endpointId);
    if (endpoint === undefined) {
      endpoint = { open: [], waiting: [] };
      this.endpoints.set(endpointId, endpoint);
    }
    return endpoint;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
