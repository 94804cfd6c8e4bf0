import { Agent } from 'node:http';
import { Client } from 'pg';
import { get } from './quiet-reader';

/*
 * Workload (x), the service's CPU per in-flight refusal, measured directly, on a server of its
 * own whose MAX_IN_FLIGHT_PER_WORKSPACE is 1: the workspace's one request in progress is held on
 * a locked table, so that every other request of the workspace is refused; 10 clients send
 * requests for up to 4 s (the lock must end before the 5 s statement timeout), and the server's
 * CPU over that time, divided by the refusals, is the cost of one. The key is known (accepted a
 * moment before), as in a burst: the refusal made at arrival.
 */

export interface RefusalCost {
  refusals: number;
  cpuMsPerRefusal: number;
  /** The requests per second the clients got answered (all 429). */
  refusalsPerSecond: number;
}

export interface RefusalCostOptions {
  port: number;
  key: string;
  databaseUrl: string;
  seconds: number;
  serviceCpuSeconds: () => number;
}

const CLIENTS = 10;

export async function measureRefusalCost(options: RefusalCostOptions): Promise<RefusalCost> {
  const { port, key } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS + 1 });
  const page = { port, key, path: '/v1/companies?limit=1' };
  // The key accepted, so that the refusals are made at arrival.
  const first = await get(page, agent);
  if (first.status !== 200)
    throw new Error(`refusal cost: the first read answered ${first.status}`);
  const locker = new Client({ connectionString: options.databaseUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
    // The one request in progress: blocked on the lock (for at most the statement timeout, 5 s).
    const held = get(page, agent);
    await waitForLockWaiter(locker);
    const cpuBefore = options.serviceCpuSeconds();
    const started = performance.now();
    const deadline = started + Math.min(options.seconds, 4) * 1000;
    let refusals = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (performance.now() < deadline) {
          const { status } = await get(page, agent);
          if (status !== 429) throw new Error(`refusal cost: a refusal answered ${status}`);
          refusals++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const cpuMs = 1000 * (options.serviceCpuSeconds() - cpuBefore);
    await locker.query('ROLLBACK');
    await held;
    return {
      refusals,
      cpuMsPerRefusal: cpuMs / refusals,
      refusalsPerSecond: refusals / elapsed,
    };
  } finally {
    agent.destroy();
    await locker.end();
  }
}

async function waitForLockWaiter(locker: Client): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const { rows } = await locker.query<{ waiting: boolean }>(
      `SELECT EXISTS (SELECT FROM pg_locks WHERE NOT granted AND relation = 'companies'::regclass)
         AS waiting`,
    );
    if (rows[0].waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('refusal cost: the held request never reached the lock');
}
