import { FairQueue } from '../src/database/fair-queue';
import type { Target } from './targets';

/*
 * The fair queue's own CPU per statement, in process and without a database, so that a busy
 * machine blurs it less than a load test would: FairQueue.run around a statement that resolves at
 * once, against the same statement called directly. Uncontended (one statement at a time: a seat
 * is always free) and contended (100 concurrent callers of 20 workspaces on 10 seats: every
 * statement but the first ten waits in the queue and is handed a seat). The service's CPU per
 * request on workloads (a) to (f) prices it (docs/benchmarks.md, "Fair share").
 */
const STATEMENTS = 200_000;
const ROUNDS = 5;

export interface FairQueueCost {
  /** CPU nanoseconds per statement added by the queue, medians of ROUNDS. */
  uncontendedNs: number;
  contendedNs: number;
}

/** The contended cost's share of the service's CPU per request on each of (a) to (f). */
export interface FairQueueShares {
  cost: FairQueueCost;
  shares: [workload: string, share: number][];
}

export const FAIR_QUEUE_TARGETS: Target<FairQueueShares>[] = [
  {
    says: 'fair queue CPU on (a) to (f) within 3 %',
    figure: ({ shares }) =>
      shares.length === 0 ? undefined : 100 * Math.max(...shares.map(([, share]) => share)),
    atMost: 3,
    unit: '%',
  },
];

const statement = () => Promise.resolve(1);

async function cpuNsPerStatement(run: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / STATEMENTS;
}

async function sequential(call: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < STATEMENTS; i++) await call();
}

async function concurrent(call: (flow: string) => Promise<unknown>): Promise<void> {
  const callers = 100;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; i < STATEMENTS / callers; i++) await call(`workspace-${caller % 20}`);
    }),
  );
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

export async function measureFairQueueCost(): Promise<FairQueueCost> {
  const queue = () => new FairQueue({ seats: 10, deadlineMs: 5_000, maxWaiting: 500 });
  const uncontended: number[] = [];
  const contended: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const direct = await cpuNsPerStatement(() => sequential(statement));
    const alone = queue();
    const queued = await cpuNsPerStatement(() => sequential(() => alone.run('w', statement)));
    uncontended.push(queued - direct);
    const directMany = await cpuNsPerStatement(() => concurrent(statement));
    const shared = queue();
    const queuedMany = await cpuNsPerStatement(() =>
      concurrent((flow) => shared.run(flow, statement)),
    );
    contended.push(queuedMany - directMany);
  }
  return { uncontendedNs: median(uncontended), contendedNs: median(contended) };
}

if (require.main === module) {
  void measureFairQueueCost().then((cost) => console.log(JSON.stringify(cost)));
}
