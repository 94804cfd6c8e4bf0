import autocannon from 'autocannon';
import { cpuSeconds } from './compression';
import {
  type Measurement,
  type ServerName,
  connections,
  seconds,
  warmupSeconds,
} from './run-settings';
import type { Workload } from './workload';
import { type RunningServer, residentMb } from './servers';

/*
 * A measured period of load on one server, and its summary.
 */

// What an MCP client sends with each POST (Streamable HTTP).
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

const randomIndex = (length: number) => Math.floor(Math.random() * length);

export interface LoadResult {
  latencies: number[];
  seconds: number;
  failures: number;
  peakRssMb: number;
  /** Bytes received, headers included, and the server's CPU seconds, over the period. */
  bytes: number;
  cpuSeconds: number;
}

/** A warm-up, then `seconds` of load, with the server's resident memory sampled meanwhile. */
export async function measure(
  { child, port }: RunningServer,
  workload: Workload,
): Promise<LoadResult> {
  await load(port, workload, warmupSeconds);
  let peakRssMb = residentMb(child.pid);
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, residentMb(child.pid))), 50);
  try {
    const cpuBefore = cpuSeconds(child.pid);
    const result = await load(port, workload, seconds);
    return { ...result, seconds, peakRssMb, cpuSeconds: cpuSeconds(child.pid) - cpuBefore };
  } finally {
    clearInterval(sampler);
  }
}

export function summarize(
  server: ServerName,
  workload: string,
  results: LoadResult[],
): Measurement {
  const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
  const at = (q: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const total = (pick: (result: LoadResult) => number) =>
    results.reduce((sum, result) => sum + pick(result), 0);
  return {
    server,
    workload,
    rps: latencies.length / total((result) => result.seconds),
    p50: at(0.5),
    p99: at(0.99),
    failures: total((result) => result.failures),
    peakRssMb: Math.max(...results.map((result) => result.peakRssMb)),
    cpuMsPerRequest: (1000 * total((result) => result.cpuSeconds)) / latencies.length,
    bytesPerResponse: total((result) => result.bytes) / latencies.length,
  };
}

/** Closed-loop load on random requests of the workload; the latency of every response. */
export async function load(
  port: number,
  workload: Workload,
  duration: number,
): Promise<{ latencies: number[]; failures: number; bytes: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let bytes = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options: autocannon.Options = {
      url: `http://127.0.0.1:${port}`,
      connections: workload.connections ?? connections,
      duration,
      requests: [
        {
          setupRequest: (request) => {
            const { path, key, body } = workload.requests[randomIndex(workload.requests.length)];
            const post = body === undefined ? {} : { method: 'POST' as const, body };
            const json = body === undefined ? {} : MCP_HEADERS;
            return {
              ...request,
              ...post,
              path,
              headers: { authorization: `Bearer ${key}`, ...json, ...workload.headers },
            };
          },
        },
      ],
    };
    const instance = autocannon(options, (error: unknown, done) =>
      error
        ? reject(error instanceof Error ? error : new Error('autocannon failed'))
        : resolve(done),
    );
    instance.on('response', (_client, statusCode, responseBytes, responseTime) => {
      latencies.push(responseTime);
      bytes += responseBytes;
      if (statusCode !== (workload.expectedStatus ?? 200)) failures += 1;
    });
  });
  return { latencies, failures: failures + result.errors + result.timeouts, bytes };
}
