import { fork } from 'node:child_process';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { get, type QuietReaderResult, type QuietReaderStart } from './quiet-reader';

/*
 * Workload (n), "noisy neighbour": one workspace bursts far beyond its in-flight limit while
 * another reads one page at a time, on the service alone (the bare and naive servers have no
 * workspaces to be fair between). As the issue measured it: waves of 300 concurrent
 * `GET /v1/companies?limit=200` through 10 keys of one workspace, each wave sent when the last is
 * answered, for the period; meanwhile the quiet workspace reads `limit=50` pages one after
 * another. Measured against the same service unloaded, in the same run:
 * - the quiet workspace's p50/p99 alone, beside the noisy one at its limit with no refusal (the
 *   floor: what the admitted load alone costs it), then during the burst, and its refusals
 *   (target: p99 at most 1.1x the floor's, no refusal);
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
  /** While the noisy workspace is served at its in-flight limit, no request refused. */
  quietBesideLimit: QuietReads;
  quietDuringBurst: QuietReads;
  noisyStatuses: Record<string, number>;
  /**
   * Pages per second, both workspaces: the noisy one at its in-flight limit in a closed loop (all
   * 200), the quiet one reading: the most the service serves of the burst's mix without a refusal.
   */
  unloadedMaxRps: number;
  /** 200s per second during the burst, both workspaces. */
  burstServedRps: number;
  peakRssMb: number;
  /** CPU per page served, in ms, at the limit and during the burst (where the pages went). */
  cpuPerPage: { atLimit: CpuPerPage; duringBurst: CpuPerPage };
}

export interface CpuPerPage {
  service: number;
  /** This process, which sends the noisy workspace's requests (on the same cores). */
  generator: number;
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
  /** The service's CPU seconds so far. */
  serviceCpuSeconds: () => number;
  log: (line: string) => void;
}

/**
 * Reads the quiet workspace's page one after another in a process of its own (quiet-reader.ts)
 * until `stop` is called; resolves with the reads' figures.
 */
export function readQuietly(options: Pick<NoisyNeighbourOptions, 'port' | 'quiet'>): {
  stop: () => Promise<QuietReads>;
} {
  const reader = fork(join(__dirname, 'quiet-reader.js'), { stdio: 'inherit' });
  const result = new Promise<QuietReaderResult>((resolve, reject) => {
    reader.once('message', (message) => resolve(message as QuietReaderResult));
    reader.once('exit', (code) => reject(new Error(`the quiet reader exited (${code})`)));
  });
  const start: QuietReaderStart = { port: options.port, ...options.quiet };
  reader.send(start);
  return {
    stop: async () => {
      reader.send('stop');
      const { latencies, refused } = await result;
      latencies.sort((a, b) => a - b);
      const at = (q: number) =>
        latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
      return { count: latencies.length, p50: at(0.5), p99: at(0.99), refused };
    },
  };
}

/** Starts counting CPU; `perPage(pages)` gives each process's CPU per page since. */
function cpuMeter(options: NoisyNeighbourOptions): { perPage: (pages: number) => CpuPerPage } {
  const service = options.serviceCpuSeconds();
  const generator = process.cpuUsage();
  return {
    perPage: (pages) => {
      const { user, system } = process.cpuUsage(generator);
      return {
        service: (1000 * (options.serviceCpuSeconds() - service)) / pages,
        generator: (user + system) / 1000 / pages,
      };
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
        const { status } = await get({ port: options.port, path: options.noisy.path, key }, agent);
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

  const alone = readQuietly(options);
  await sleep(seconds * 1000);
  const quietAlone = await alone.stop();
  log(
    `noisy neighbour: quiet workspace alone p50 ${quietAlone.p50.toFixed(1)} ms, ` +
      `p99 ${quietAlone.p99.toFixed(1)} ms (${quietAlone.count} reads)`,
  );
  // The most the service serves without refusing: what the burst's throughput is measured
  // against, and the quiet workspace's latency that the noisy one's admitted load alone costs.
  const besideLimit = readQuietly(options);
  const limitStarted = performance.now();
  const limitCpu = cpuMeter(options);
  const noisyAtLimitRps = await closedLoop(options, options.inFlightLimit);
  const quietBesideLimit = await besideLimit.stop();
  const limitSeconds = (performance.now() - limitStarted) / 1000;
  const unloadedMaxRps =
    noisyAtLimitRps + (quietBesideLimit.count - quietBesideLimit.refused) / limitSeconds;
  const atLimit = limitCpu.perPage(unloadedMaxRps * limitSeconds);
  log(
    `noisy neighbour: the noisy workspace at its limit, no refusal: ${unloadedMaxRps.toFixed(1)} ` +
      `pages/s; quiet p50 ${quietBesideLimit.p50.toFixed(1)} ms, p99 ` +
      `${quietBesideLimit.p99.toFixed(1)} ms`,
  );

  const agent = new Agent({ keepAlive: true, maxSockets: waveSize });
  const noisyStatuses: Record<string, number> = {};
  let peakRssMb = options.residentMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, options.residentMb())), 50);
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const burstCpu = cpuMeter(options);
  const quiet = readQuietly(options);
  let noisyServed = 0;
  try {
    while (performance.now() < deadline) {
      const wave = await Promise.all(
        Array.from({ length: waveSize }, (_, i) =>
          get(
            {
              port: options.port,
              path: options.noisy.path,
              key: options.noisy.keys[i % options.noisy.keys.length],
            },
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
    clearInterval(sampler);
    agent.destroy();
  }
  const elapsed = (performance.now() - started) / 1000;
  const quietDuringBurst = await quiet.stop();
  const burstServed = noisyServed + quietDuringBurst.count - quietDuringBurst.refused;
  const burstServedRps = burstServed / elapsed;
  const duringBurst = burstCpu.perPage(burstServed);
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
    quietBesideLimit,
    quietDuringBurst,
    noisyStatuses,
    unloadedMaxRps,
    burstServedRps,
    peakRssMb,
    cpuPerPage: { atLimit, duringBurst },
  };
}
