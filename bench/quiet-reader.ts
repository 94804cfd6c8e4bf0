import { Agent, request } from 'node:http';

/*
 * The quiet workspace of workload (n), in a process of its own (forked by noisy-neighbour.ts): a
 * customer apart from the one that bursts. In the burst's process its timings measured that
 * process's event loop as much as the service: answering a wave of 300 requests held the quiet
 * reader's next request and its clock (measured: p99 253 ms in one process, docs/benchmarks.md,
 * "Fair share").
 *
 * Reads `path` with `key` one page after another, on one kept-alive connection (or a new one for
 * each read), from the parent's 'start' message until its 'stop'; then sends back the latencies and
 * how many were not 200.
 */

export interface QuietReaderStart {
  port: number;
  path: string;
  key: string;
  /** A new connection for each read, as a client that does not keep them (default: one kept). */
  newConnections?: boolean;
}

export interface QuietReaderResult {
  latencies: number[];
  refused: number;
}

export function get(
  { port, path, key }: QuietReaderStart,
  agent: Agent,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number) => resolve({ status, ms: performance.now() - started });
    const outgoing = request(
      { host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        response.resume();
        response.on('end', () => done(response.statusCode ?? 0));
        response.on('error', () => done(0));
      },
    );
    outgoing.on('error', () => done(0));
    outgoing.end();
  });
}

async function readUntilStopped(start: QuietReaderStart): Promise<QuietReaderResult> {
  let stopped = false;
  process.once('message', () => (stopped = true));
  const agent = new Agent({ keepAlive: !start.newConnections, maxSockets: 1 });
  const latencies: number[] = [];
  let refused = 0;
  while (!stopped) {
    const { status, ms } = await get(start, agent);
    latencies.push(ms);
    if (status !== 200) refused++;
  }
  agent.destroy();
  return { latencies, refused };
}

if (require.main === module) {
  process.once('message', (start: QuietReaderStart) => {
    void readUntilStopped(start).then((result) => process.send?.(result, () => process.exit(0)));
  });
}
