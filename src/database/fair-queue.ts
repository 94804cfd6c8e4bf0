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
  /** The sum of its running statements' start times: their mean age without a list of them. */
  startedAtSum: number;
  /** Measured service time charged to it, in ms, on a scale shared by the active flows. */
  served: number;
  /** What one of its statements takes, in ms, as measured; undefined until one has ended. */
  costMs: number | undefined;
  /** The statements `costMs` was measured on. */
  measured: number;
}

// The estimates of a statement's time follow the last ~20 measurements: an exponentially weighted
// average whose first 20 measurements are weighed equally (their mean). Started from the first one
// alone, it would price a new process's statements by its first, slowest ones for tens of
// statements: measured in the shutdown test on two busy cores, a cold server's first statements
// take 120 to 540 ms, the next ones 30 to 60, and the burst behind them drains in 1.4 s.
const SMOOTHING = 0.05;

/** `average` moved toward a new sample, the `samples`-th it is measured on. */
function averaged(average: number, samples: number, sample: number): number {
  return average + Math.max(SMOOTHING, 1 / samples) * (sample - average);
}

// A flow's cost is remembered this long after its last statement, so that a workspace whose
// requests come in waves is priced at its own cost from the first statement of the next wave; at
// most MAX_REMEMBERED_COSTS of them (the oldest go first).
const COST_MEMORY_MS = 60_000;
const MAX_REMEMBERED_COSTS = 10_000;
// How far back `othersAskedWithin` can look.
const ASKED_MEMORY_MS = 10_000;
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
 *   `deadlineMs`, each waiting statement priced at its own flow's measured cost: all of them
 *   through every seat, and each flow's own through its share of the seats. A page of 5 companies
 *   is priced as one, not as the average statement, which pages of 200 with their contacts
 *   dominate. A statement that would push the backlog past the deadline is admitted, and the flow
 *   with the most in flight (running and waiting) loses its newest waiter, refused at once with
 *   OverloadedError: the newcomer itself when its flow is the heaviest. A flow whose own backlog
 *   would not drain through its share loses its newest waiters the same way. A statement that
 *   still waits at the deadline (the estimate was wrong: the database slowed down) is refused then.
 * - **Estimates that notice a stall.** A flow's statements running longer than its cost are
 *   evidence the cost is stale: the mean age of its running statements is a lower bound of their
 *   time. A flow not measured yet is priced at the average statement, or at the mean age of every
 *   running statement when that is longer (a database that stalls for every workspace).
 * - **No flow labels.** Flows live only while they have work, and a flow's measured cost a minute
 *   after (a bounded number of them); nothing else is kept per workspace.
 */
export class FairQueue {
  readonly seats: number;
  readonly seatsPerFlow: number;
  private readonly flows = new Map<string, Flow>();
  /** Measured costs of flows that went idle, by flow id, oldest first. */
  private readonly rememberedCosts = new Map<
    string,
    { costMs: number; measured: number; at: number }
  >();
  /** When each flow last asked for a seat, least recent first (ASKED_MEMORY_MS of them). */
  private readonly lastAsked = new Map<string, number>();
  private running = 0;
  /** The sum of the running statements' start times: their mean age without a list of them. */
  private startedAtSum = 0;
  private waitingCount = 0;
  /** The average statement, in ms, and the statements it was measured on. */
  private serviceMs: number;
  private serviceMeasured = 0;
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

  /**
   * The estimate of one statement's time, in ms, for a flow not measured yet: the average
   * statement, or the mean age of the running ones when that is longer (a database that stalled).
   */
  private get unmeasuredCostMs(): number {
    if (this.running === 0) return this.serviceMs;
    return Math.max(this.serviceMs, this.now() - this.startedAtSum / this.running);
  }

  /** The estimate of one of the flow's statements, in ms, that the shedding uses. */
  private costOf(flow: Flow, unmeasuredMs: number): number {
    if (flow.costMs === undefined) return unmeasuredMs;
    if (flow.running === 0) return flow.costMs;
    return Math.max(flow.costMs, this.now() - flow.startedAtSum / flow.running);
  }

  /**
   * True when a flow other than `flowId` has asked for a seat within the last `withinMs` (at most
   * ASKED_MEMORY_MS): a flow that could take more seats than it needs (a change stream reading
   * ahead) leaves them to its neighbours' statements then.
   */
  othersAskedWithin(flowId: string, withinMs: number): boolean {
    const now = this.now();
    for (const [id, at] of this.lastAsked) {
      if (now - at > ASKED_MEMORY_MS) this.lastAsked.delete(id);
      else if (id !== flowId && now - at <= withinMs) return true;
    }
    return false;
  }

  /** Runs `task` on a seat, in `flowId`'s turn; rejects with OverloadedError when shed. */
  async run<T>(flowId: string, task: () => Promise<T>): Promise<T> {
    const askedAt = this.now();
    this.lastAsked.delete(flowId);
    this.lastAsked.set(flowId, askedAt);
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
      const remembered = this.rememberedCosts.get(id);
      flow = {
        id,
        waiting: [],
        running: 0,
        startedAtSum: 0,
        served: least === Infinity ? 0 : least,
        costMs: remembered?.costMs,
        measured: remembered?.measured ?? 0,
      };
      this.rememberedCosts.delete(id);
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
    const { deadlineMs, maxWaiting } = this.options;
    for (;;) {
      const heaviest = this.heaviestWaitingFlow();
      if (heaviest === undefined) return;
      // What each waiting flow's backlog takes through one seat, and all of them together.
      const unmeasuredMs = this.unmeasuredCostMs;
      let backlogMs = 0;
      let overShare: Flow | undefined;
      for (const flow of this.flows.values()) {
        if (flow.waiting.length === 0) continue;
        const flowBacklogMs = flow.waiting.length * this.costOf(flow, unmeasuredMs);
        backlogMs += flowBacklogMs;
        // A flow's own backlog drains through its share of the seats only.
        if (flowBacklogMs / this.seatsPerFlow > deadlineMs) overShare ??= flow;
      }
      const tooMany = this.waitingCount > maxWaiting || backlogMs / this.seats > deadlineMs;
      const victim = tooMany ? heaviest : overShare;
      if (victim === undefined) return;
      const waiter = victim.waiting.at(-1)!;
      this.remove(waiter);
      waiter.reject(new OverloadedError(`the backlog would not drain within ${deadlineMs} ms`));
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
    flow.startedAtSum += startedAt;
    this.running++;
    flow.running++;
    // Charged now with the estimate, corrected with the measurement when it ends: a flow cannot
    // take every seat at once just because none of its statements has finished yet.
    const charged = flow.costMs ?? this.serviceMs;
    flow.served += charged;
    return { startedAt, charged };
  }

  private finish(flow: Flow, { startedAt, charged }: Seat): void {
    const tookMs = this.now() - startedAt;
    this.running--;
    flow.running--;
    this.startedAtSum -= startedAt;
    flow.startedAtSum -= startedAt;
    flow.served += tookMs - charged;
    this.serviceMs = averaged(this.serviceMs, ++this.serviceMeasured, tookMs);
    flow.costMs = averaged(flow.costMs ?? tookMs, ++flow.measured, tookMs);
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
    if (flow.running > 0 || flow.waiting.length > 0) return;
    this.flows.delete(flow.id);
    if (flow.costMs === undefined) return;
    const now = this.now();
    this.rememberedCosts.set(flow.id, { costMs: flow.costMs, measured: flow.measured, at: now });
    // Oldest first: forget those past the memory, and the oldest beyond the bound.
    for (const [id, { at }] of this.rememberedCosts) {
      if (now - at <= COST_MEMORY_MS && this.rememberedCosts.size <= MAX_REMEMBERED_COSTS) break;
      this.rememberedCosts.delete(id);
    }
  }
}
