import { Agent, request } from 'node:http';

/*
 * Workload (n), "noisy neighbour": one workspace bursts far beyond its in-flight limit while
 * another reads one page at a time, on the service alone (the bare and naive servers have no
 * workspaces to be fair between). As the issue measured it: waves of 300 concurrent
 * `GET /v1/companies?limit=200` through 10 keys of one workspace, each wave sent when the last is
 * answered, for the period; meanwhile the quiet workspace reads `limit=50` pages one after
 * another. Measured against the same service unloaded, in the same run:
 * - the quiet workspace's p50/p99 alone, then during the burst, and its refusals (target: p99 at
 *   most 2x, no refusal);
 * - the noisy workspace's answers by status (200 and 429 only);
 * - the pages served per second during the burst (both workspaces) against the most the service
 *   serves of the noisy page with no refusal at all: the noisy workspace alone at its in-flight
 *   limit, closed loop (target: at least 0.9x);
 * - the server's peak resident memory (target: under 256 MiB).
 */

export interface NoisyNeighbourRun {
  waveSize: number;
  noisyKeys: number;
  quietAlone: QuietReads;
  quietDuringBurst: QuietReads;
  noisyStatuses: Record<string, number>;
  /** Pages per second: the noisy page alone at the in-flight limit, closed loop, all 200. */
  unloadedMaxRps: number;
  /** 200s per second during the burst, both workspaces. */
  burstServedRps: number;
  peakRssMb: number;
}

export interface QuietReads {
  count: number;
  p50: number;
  p99: number;
  refused: number;
}

export interface NoisyNeighbourOptions {
  port: number;
  quiet: { path: string; key: string };
  noisy: { path: string; keys: string[] };
  inFlightLimit: number;
  seconds: number;
  waveSize: number;
  residentMb: () => number;
  log: (line: string) => void;
}

function get(
  port: number,
  path: string,
  key: string,
  agent: Agent,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const outgoing = request(
      { host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }),
        );
        response.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
      },
    );
    outgoing.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    outgoing.end();
  });
}

/** One page after another until `until()` says stop. */
async function readQuietly(
  options: NoisyNeighbourOptions,
  until: () => boolean,
): Promise<QuietReads> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let refused = 0;
  try {
    while (!until()) {
      const { status, ms } = await get(options.port, options.quiet.path, options.quiet.key, agent);
      latencies.push(ms);
      if (status !== 200) refused++;
    }
  } finally {
    agent.destroy();
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { count: latencies.length, p50: at(0.5), p99: at(0.99), refused };
}

/** The noisy page with `connections` clients in a closed loop: pages per second, all must be 200. */
async function closedLoop(options: NoisyNeighbourOptions, connections: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const deadline = performance.now() + options.seconds * 1000;
  let served = 0;
  const other: Record<string, number> = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, i) => {
      while (performance.now() < deadline) {
        const key = options.noisy.keys[i % options.noisy.keys.length];
        const { status } = await get(options.port, options.noisy.path, key, agent);
        if (status === 200) served++;
        else other[status || 'no answer'] = (other[status || 'no answer'] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  if (Object.keys(other).length > 0) {
    throw new Error(
      `noisy neighbour: at the in-flight limit alone, not 200: ${JSON.stringify(other)}`,
    );
  }
  return served / ((performance.now() - started) / 1000);
}

export async function measureNoisyNeighbour(
  options: NoisyNeighbourOptions,
): Promise<NoisyNeighbourRun> {
  const { seconds, waveSize, log } = options;
  // Warm-up of both pages.
  await closedLoop({ ...options, seconds: Math.min(2, seconds) }, options.inFlightLimit);

  let deadline = performance.now() + seconds * 1000;
  const quietAlone = await readQuietly(options, () => performance.now() >= deadline);
  log(
    `noisy neighbour: quiet workspace alone p50 ${quietAlone.p50.toFixed(1)} ms, ` +
      `p99 ${quietAlone.p99.toFixed(1)} ms (${quietAlone.count} reads)`,
  );
  const unloadedMaxRps = await closedLoop(options, options.inFlightLimit);
  log(`noisy neighbour: the noisy page alone at the limit: ${unloadedMaxRps.toFixed(1)} pages/s`);

  const agent = new Agent({ keepAlive: true, maxSockets: waveSize });
  const noisyStatuses: Record<string, number> = {};
  let peakRssMb = options.residentMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, options.residentMb())), 50);
  let bursting = true;
  deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const quiet = readQuietly(options, () => !bursting);
  let noisyServed = 0;
  try {
    while (performance.now() < deadline) {
      const wave = await Promise.all(
        Array.from({ length: waveSize }, (_, i) =>
          get(
            options.port,
            options.noisy.path,
            options.noisy.keys[i % options.noisy.keys.length],
            agent,
          ),
        ),
      );
      for (const { status } of wave) {
        noisyStatuses[status] = (noisyStatuses[status] ?? 0) + 1;
        if (status === 200) noisyServed++;
      }
    }
  } finally {
    bursting = false;
    clearInterval(sampler);
    agent.destroy();
  }
  const elapsed = (performance.now() - started) / 1000;
  const quietDuringBurst = await quiet;
  const burstServedRps =
    (noisyServed + quietDuringBurst.count - quietDuringBurst.refused) / elapsed;
  log(
    `noisy neighbour: during the burst, quiet p50 ${quietDuringBurst.p50.toFixed(1)} ms, p99 ` +
      `${quietDuringBurst.p99.toFixed(1)} ms, refused ${quietDuringBurst.refused}; noisy ` +
      `${JSON.stringify(noisyStatuses)}; ${burstServedRps.toFixed(1)} pages/s served; ` +
      `peak RSS ${peakRssMb.toFixed(0)} MB`,
  );
  return {
    waveSize,
    noisyKeys: options.noisy.keys.length,
    quietAlone,
    quietDuringBurst,
    noisyStatuses,
    unloadedMaxRps,
    burstServedRps,
    peakRssMb,
  };
}
