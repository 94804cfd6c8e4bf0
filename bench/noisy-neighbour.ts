import { fork } from 'node:child_process';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { get, type QuietReaderResult, type QuietReaderStart } from './quiet-reader';
import type { Target } from './targets';

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
  /** The same burst again, the quiet workspace opening a new connection for each read. */
  quietNewConnectionsDuringBurst: QuietReads;
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

// Against the floor: the quiet workspace beside the noisy one served at its limit, no refusal (on
// shared cores the admitted load alone sets the quiet one's latency; its ratio to alone is
// reported, not a target).
export const NOISY_NEIGHBOUR_TARGETS: Target<NoisyNeighbourRun>[] = [
  {
    says: 'quiet p99 during the burst <= 1.1x beside the noisy one at its limit',
    figure: (run) => run.quietDuringBurst.p99 / run.quietBesideLimit.p99,
    atMost: 1.1,
    unit: 'x',
  },
  {
    says: 'quiet maximum during the burst <= 3x its p99 beside the noisy one at its limit',
    figure: (run) => run.quietDuringBurst.max / run.quietBesideLimit.p99,
    atMost: 3,
    unit: 'x',
  },
  {
    says: 'the same, a new connection for each read',
    figure: (run) => run.quietNewConnectionsDuringBurst.max / run.quietBesideLimit.p99,
    atMost: 3,
    unit: 'x',
  },
  {
    says: 'quiet workspace refused during the burst: 0',
    figure: (run) => run.quietDuringBurst.refused,
    atMost: 0,
    unit: '',
  },
  {
    says: 'noisy workspace answers other than 200 and 429: 0',
    figure: (run) =>
      Object.entries(run.noisyStatuses)
        .filter(([status]) => status !== '200' && status !== '429')
        .reduce((sum, [, count]) => sum + count, 0),
    atMost: 0,
    unit: '',
  },
  {
    says: 'pages served during the burst >= 0.9x unloaded',
    figure: (run) => run.burstServedRps / run.unloadedMaxRps,
    atLeast: 0.9,
    unit: 'x',
  },
  { says: 'peak RSS <= 256 MiB', figure: (run) => run.peakRssMb, atMost: 256, unit: 'MB' },
];

export interface CpuPerPage {
  service: number;
  /** This process, which sends the noisy workspace's requests (on the same cores). */
  generator: number;
}

export interface QuietReads {
  /** Reads, the first included. */
  count: number;
  /** Of the reads after the first, on the reader's kept-alive connection. */
  p50: number;
  p99: number;
  max: number;
  /** The first read, which opens the reader's connection as the phase begins. */
  first: number;
  refused: number;
  /** The service's event loop and collector during the phase, when its metrics were read. */
  server?: ServerPauses;
}

/** The service's event-loop delay (prom-client's, reset at each scrape) and its GC pauses. */
export interface ServerPauses {
  eventLoopDelay: { p50: number; p99: number; max: number };
  /** Pauses by kind (minor, major, incremental, weakcb): how many and their total, in ms. */
  gc: Record<string, { count: number; totalMs: number }>;
  gcLongestMs: number;
}

export interface NoisyNeighbourOptions {
  port: number;
  /** The service's METRICS_PORT, where its event loop and GC pauses are read. */
  metricsPort?: number;
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
 * until `stop` is called; resolves with the reads' figures and the service's pauses meanwhile.
 */
export async function readQuietly(
  options: Pick<NoisyNeighbourOptions, 'port' | 'metricsPort' | 'quiet'>,
  newConnections = false,
): Promise<{ stop: () => Promise<QuietReads> }> {
  const pauses =
    options.metricsPort === undefined ? undefined : await serverPauses(options.metricsPort);
  const reader = fork(join(__dirname, 'quiet-reader.js'), { stdio: 'inherit' });
  const result = new Promise<QuietReaderResult>((resolve, reject) => {
    reader.once('message', (message) => resolve(message as QuietReaderResult));
    reader.once('exit', (code) => reject(new Error(`the quiet reader exited (${code})`)));
  });
  const start: QuietReaderStart = { port: options.port, ...options.quiet, newConnections };
  reader.send(start);
  return {
    stop: async () => {
      reader.send('stop');
      const { latencies, refused } = await result;
      const server = await pauses?.since();
      const [first, ...kept] = latencies;
      kept.sort((a, b) => a - b);
      const at = (q: number) => kept[Math.min(kept.length - 1, Math.floor(q * kept.length))];
      return {
        count: latencies.length,
        p50: at(0.5),
        p99: at(0.99),
        max: kept[kept.length - 1],
        first,
        refused,
        server,
      };
    },
  };
}

/** A scrape of the service's metrics: the values of the lines named. */
async function scrape(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^visitor_api_(\S+) (\S+)$/.exec(line);
    if (match) values.set(match[1], Number(match[2]));
  }
  return values;
}

/**
 * Starts a period of the service's pauses: the scrape resets the event-loop delay's histogram and
 * the longest GC pause; `since()` scrapes again and reads the period's.
 */
async function serverPauses(metricsPort: number): Promise<{ since: () => Promise<ServerPauses> }> {
  const before = await scrape(metricsPort);
  return {
    since: async () => {
      const after = await scrape(metricsPort);
      const ms = (name: string) => 1000 * (after.get(name) ?? NaN);
      const gc: ServerPauses['gc'] = {};
      for (const [name, count] of after) {
        const kind = /^gc_pause_seconds_count\{kind="(\w+)"\}$/.exec(name)?.[1];
        if (kind === undefined) continue;
        const sum = `gc_pause_seconds_sum{kind="${kind}"}`;
        gc[kind] = {
          count: count - (before.get(name) ?? 0),
          totalMs: 1000 * ((after.get(sum) ?? 0) - (before.get(sum) ?? 0)),
        };
      }
      return {
        eventLoopDelay: {
          p50: ms('nodejs_eventloop_lag_p50_seconds'),
          p99: ms('nodejs_eventloop_lag_p99_seconds'),
          max: ms('nodejs_eventloop_lag_max_seconds'),
        },
        gc,
        gcLongestMs: ms('gc_pause_max_seconds'),
      };
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

/** A phase's reads and the service's pauses, for the log. */
function described(reads: QuietReads): string {
  const ms = (value: number | undefined) => `${value?.toFixed(1)} ms`;
  const { server } = reads;
  const gc = Object.entries(server?.gc ?? {})
    .map(([kind, { count, totalMs }]) => `${count} ${kind} ${totalMs.toFixed(0)} ms`)
    .join(', ');
  return (
    `p50 ${ms(reads.p50)}, p99 ${ms(reads.p99)}, max ${ms(reads.max)}, first ${ms(reads.first)} ` +
    `(${reads.count} reads, ${reads.refused} refused); event loop p99 ` +
    `${ms(server?.eventLoopDelay.p99)}, max ${ms(server?.eventLoopDelay.max)}; GC ${gc}, ` +
    `longest ${ms(server?.gcLongestMs)}`
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The noisy workspace's waves for the period: `waveSize` requests at once, through its keys, each
 * wave when the last is answered; the answers of all. Its agent keeps at most 256 idle connections
 * (Node's default), so each wave but the first also opens the 44 others.
 */
async function sendWaves(options: NoisyNeighbourOptions): Promise<{ status: number }[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.waveSize });
  const deadline = performance.now() + options.seconds * 1000;
  const answers: { status: number }[] = [];
  try {
    while (performance.now() < deadline) {
      const wave = await Promise.all(
        Array.from({ length: options.waveSize }, (_, i) =>
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
      answers.push(...wave);
    }
  } finally {
    agent.destroy();
  }
  return answers;
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

  const alone = await readQuietly(options);
  await sleep(seconds * 1000);
  const quietAlone = await alone.stop();
  log(`noisy neighbour: quiet workspace alone: ${described(quietAlone)}`);
  // The most the service serves without refusing: what the burst's throughput is measured
  // against, and the quiet workspace's latency that the noisy one's admitted load alone costs.
  const besideLimit = await readQuietly(options);
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
      `pages/s; quiet ${described(quietBesideLimit)}`,
  );

  const noisyStatuses: Record<string, number> = {};
  let peakRssMb = options.residentMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, options.residentMb())), 50);
  const started = performance.now();
  const burstCpu = cpuMeter(options);
  const quiet = await readQuietly(options);
  let noisyServed = 0;
  try {
    for (const { status } of await sendWaves(options)) {
      noisyStatuses[status] = (noisyStatuses[status] ?? 0) + 1;
      if (status === 200) noisyServed++;
    }
  } finally {
    clearInterval(sampler);
  }
  const elapsed = (performance.now() - started) / 1000;
  const quietDuringBurst = await quiet.stop();
  const burstServed = noisyServed + quietDuringBurst.count - quietDuringBurst.refused;
  const burstServedRps = burstServed / elapsed;
  const duringBurst = burstCpu.perPage(burstServed);
  log(
    `noisy neighbour: during the burst, quiet ${described(quietDuringBurst)}; noisy ` +
      `${JSON.stringify(noisyStatuses)}; ${burstServedRps.toFixed(1)} pages/s served; ` +
      `peak RSS ${peakRssMb.toFixed(0)} MB`,
  );
  // A client that does not keep its connection (curl in a loop, a script without a session)
  // connects while each wave's new connections are being accepted.
  const connecting = await readQuietly(options, true);
  await sendWaves(options);
  const quietNewConnectionsDuringBurst = await connecting.stop();
  log(
    'noisy neighbour: during the burst, quiet with a new connection for each read, ' +
      described(quietNewConnectionsDuringBurst),
  );
  return {
    waveSize,
    noisyKeys: options.noisy.keys.length,
    quietAlone,
    quietBesideLimit,
    quietDuringBurst,
    quietNewConnectionsDuringBurst,
    noisyStatuses,
    unloadedMaxRps,
    burstServedRps,
    peakRssMb,
    cpuPerPage: { atLimit, duringBurst },
  };
}
