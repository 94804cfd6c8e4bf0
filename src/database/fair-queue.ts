/**
 * A statement refused without waiting: the backlog ahead of it could not drain within the queue's
 * deadline, or it waited that long (database-errors.ts maps it to a 503, `Retry-After: 1`).
 */
export class OverloadedError extends Error {
  readonly code = 'OVERLOADED';

  constructor(reason: string) {
    super(`overloaded: ${reason}`);
    this.name = 'OverloadedError';
  }
}

export interface FairQueueOptions {
  /** Statements that may run at once: the connections they run on. */
  seats: number;
  /** Seats one flow may hold at once (default: all): the rest stay free for the others. */
  seatsPerFlow?: number;
  /** The longest a statement should wait for a seat (QUEUE_DEADLINE_MS). */
  deadlineMs: number;
  /** A hard bound on the statements waiting, whatever the estimate says (memory, timers). */
  maxWaiting: number;
  /** What a statement is assumed to take before any has been measured. */
  initialServiceMs?: number;
  now?: () => number;
}

/** What the metrics read of the queue. */
export interface FairQueueObserver {
  /** A statement got its seat after waiting this long (0 when one was free). */
  waited(ms: number): void;
}

interface Waiter {
  flow: Flow;
  enqueuedAt: number;
  timer: NodeJS.Timeout;
  resolve: (seat: Seat) => void;
  reject: (error: Error) => void;
}

/** A seat taken: when, and the estimate its flow was charged for it until it ends. */
interface Seat {
  startedAt: number;
  charged: number;
}

/** One workspace's statements, running and waiting. */
interface Flow {
  id: string;
  waiting: Waiter[];
  running: number;
  /** Measured service time charged to it, in ms, on a scale shared by the active flows. */
  served: number;
}

// The estimate of a statement's time follows the last ~20 measurements.
const SMOOTHING = 0.05;
// While statements wait, the backlog is weighed again this often: a database that stalls makes the
// estimate grow with no new arrival, and the waiters that can no longer be served in time are
// refused then rather than at their deadline.
const RECHECK_MS = 100;

/**
 * Fair turns at a fixed number of seats (database connections) for statements of many workspaces
 * (flows), in place of the pool's one FIFO queue.
 *
 * - **Fair.** A free seat goes to the waiting flow that has been served least, service measured as
 *   the time its statements held a seat (start-time fair queuing on measured cost): a page of 200
 *   companies with contacts, or a deep offset, costs its flow what it took, and a workspace with one
 *   statement waiting goes ahead of another's backlog. A flow that comes back from idle starts level
 *   with the least served active flow: it gets no credit for the time it was away.
 * - **A share per flow.** One flow holds at most `seatsPerFlow` seats at once; what waits beyond
 *   that waits even with seats free, which stay for the other flows.
 * - **Bounded by time, heaviest shed first.** The backlog is kept small enough to drain within
 *   `deadlineMs` at the measured service rate (seats / time per statement; a flow's own backlog
 *   through its share only). A statement that would push it past that is admitted, and the flow
 *   with the most in flight (running and waiting) loses its newest waiter, refused at once with
 *   OverloadedError: the newcomer itself when its flow is the heaviest. A statement that still
 *   waits at the deadline (the estimate was wrong: the database slowed down) is refused then.
 * - **No flow labels.** Flows live only while they have work; the queue keeps nothing per
 *   workspace beyond that.
 */
export class FairQueue {
  readonly seats: number;
  readonly seatsPerFlow: number;
  private readonly flows = new Map<string, Flow>();
  private running = 0;
  /** The sum of the running statements' start times: their mean age without a list of them. */
  private startedAtSum = 0;
  private waitingCount = 0;
  private serviceMs: number;
  private recheck: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  observer: FairQueueObserver | undefined;

  constructor(private readonly options: FairQueueOptions) {
    this.seats = options.seats;
    this.seatsPerFlow = Math.min(options.seatsPerFlow ?? options.seats, options.seats);
    this.serviceMs = options.initialServiceMs ?? 20;
    this.now = options.now ?? (() => performance.now());
  }

  /** Statements holding a seat. */
  get busy(): number {
    return this.running;
  }

  /** Statements waiting for one. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** The estimate of one statement's time, in ms, that the shedding uses. */
  private get estimatedServiceMs(): number {
    // A statement running longer than the average is evidence the average is stale (a database
    // that stalled): the mean age of the running ones is a lower bound of their time.
    if (this.running === 0) return this.serviceMs;
    const meanAge = this.now() - this.startedAtSum / this.running;
    return Math.max(this.serviceMs, meanAge);
  }

  /** Runs `task` on a seat, in `flowId`'s turn; rejects with OverloadedError when shed. */
  async run<T>(flowId: string, task: () => Promise<T>): Promise<T> {
    const flow = this.flowOf(flowId);
    let seat: Seat;
    // A seat free and no statement that may take it waiting (dispatch gives every free seat to a
    // waiting flow below its share; what waits with a seat free is of flows at their share).
    if (this.running < this.seats && flow.running < this.seatsPerFlow && !flow.waiting.length) {
      seat = this.take(flow);
      this.observer?.waited(0);
    } else {
      seat = await this.enqueue(flow);
    }
    try {
      return await task();
    } finally {
      this.finish(flow, seat);
    }
  }

  private flowOf(id: string): Flow {
    let flow = this.flows.get(id);
    if (flow === undefined) {
      // Level with the least served active flow as it was before its running statements, whose
      // estimates are charged already: a newcomer is not behind a flow just because that flow
      // holds every seat right now.
      let least = Infinity;
      for (const other of this.flows.values()) {
        least = Math.min(least, other.served - other.running * this.serviceMs);
      }
      flow = { id, waiting: [], running: 0, served: least === Infinity ? 0 : least };
      this.flows.set(id, flow);
    }
    return flow;
  }

  /** Waits for a seat; resolves with it, once taken. */
  private enqueue(flow: Flow): Promise<Seat> {
    return new Promise<Seat>((resolve, reject) => {
      const enqueuedAt = this.now();
      const waiter: Waiter = {
        flow,
        enqueuedAt,
        resolve: (seat) => {
          this.observer?.waited(seat.startedAt - enqueuedAt);
          resolve(seat);
        },
        reject,
        timer: setTimeout(() => {
          this.remove(waiter);
          reject(new OverloadedError(`no connection within ${this.options.deadlineMs} ms`));
        }, this.options.deadlineMs).unref(),
      };
      flow.waiting.push(waiter);
      this.waitingCount++;
      this.recheck ??= setInterval(() => this.shed(), RECHECK_MS).unref();
      this.shed();
    });
  }

  /** Refuses the newest waiters of the heaviest flows until the backlog drains in time. */
  private shed(): void {
    for (;;) {
      const heaviest = this.heaviestWaitingFlow();
      if (heaviest === undefined) return;
      const serviceMs = this.estimatedServiceMs;
      const tooMany =
        this.waitingCount > this.options.maxWaiting ||
        (this.waitingCount * serviceMs) / this.seats > this.options.deadlineMs ||
        // A flow's own backlog drains through its share of the seats only.
        (heaviest.waiting.length * serviceMs) / this.seatsPerFlow > this.options.deadlineMs;
      if (!tooMany) return;
      const waiter = heaviest.waiting.at(-1)!;
      this.remove(waiter);
      waiter.reject(
        new OverloadedError(`the backlog would not drain within ${this.options.deadlineMs} ms`),
      );
    }
  }

  private heaviestWaitingFlow(): Flow | undefined {
    let heaviest: Flow | undefined;
    for (const flow of this.flows.values()) {
      if (flow.waiting.length === 0) continue;
      const load = flow.running + flow.waiting.length;
      if (heaviest === undefined || load > heaviest.running + heaviest.waiting.length) {
        heaviest = flow;
      }
    }
    return heaviest;
  }

  private remove(waiter: Waiter): void {
    const { waiting } = waiter.flow;
    const index = waiting.indexOf(waiter);
    if (index === -1) return;
    waiting.splice(index, 1);
    this.left(waiter);
  }

  /** A waiter is out of the queue, served or refused. */
  private left(waiter: Waiter): void {
    this.waitingCount--;
    clearTimeout(waiter.timer);
    if (this.waitingCount === 0) {
      clearInterval(this.recheck);
      this.recheck = undefined;
    }
    this.forgetIfIdle(waiter.flow);
  }

  /** Takes a seat for `flow`, charging the flow the current estimate until it ends. */
  private take(flow: Flow): Seat {
    const startedAt = this.now();
    this.startedAtSum += startedAt;
    this.running++;
    flow.running++;
    // Charged now with the estimate, corrected with the measurement when it ends: a flow cannot
    // take every seat at once just because none of its statements has finished yet.
    flow.served += this.serviceMs;
    return { startedAt, charged: this.serviceMs };
  }

  private finish(flow: Flow, { startedAt, charged }: Seat): void {
    const tookMs = this.now() - startedAt;
    this.running--;
    flow.running--;
    this.startedAtSum -= startedAt;
    flow.served += tookMs - charged;
    this.serviceMs += SMOOTHING * (tookMs - this.serviceMs);
    this.forgetIfIdle(flow);
    this.dispatch();
  }

  /** Gives free seats to the least served waiting flows below their share. */
  private dispatch(): void {
    while (this.running < this.seats && this.waitingCount > 0) {
      let next: Flow | undefined;
      for (const flow of this.flows.values()) {
        const eligible = flow.waiting.length > 0 && flow.running < this.seatsPerFlow;
        if (eligible && (next === undefined || flow.served < next.served)) next = flow;
      }
      if (next === undefined) return;
      const waiter = next.waiting.shift()!;
      // Taken now, before the waiter resumes, so that this loop and any statement arriving
      // meanwhile see it as taken.
      const seat = this.take(waiter.flow);
      this.left(waiter);
      waiter.resolve(seat);
    }
  }

  private forgetIfIdle(flow: Flow): void {
    if (flow.running === 0 && flow.waiting.length === 0) this.flows.delete(flow.id);
  }
}
