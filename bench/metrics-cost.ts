import { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Pool } from 'pg';
import { FairQueue } from '../src/database/fair-queue';
import { ApiMetrics } from '../src/metrics/api-metrics';
import { timeRequests } from '../src/metrics/request-timing';

/*
 * The metrics' own CPU per request, in process and without the network, so that a busy machine
 * blurs it less than the load of workload (e): the 'request' listener, the two hrtimes, the
 * 'finish' listener and ApiMetrics.record on real node:http objects, against the same loop with
 * metrics off. `tsc -p bench/tsconfig.json && node dist-bench/bench/metrics-cost.js`
 */
const REQUESTS = 200_000;
const ROUNDS = 5;
const ROUTES = ['/v1/me', '/v1/companies', '/v1/companies/:id', '/health/live'];

/** CPU nanoseconds per request. */
function run(withMetrics: boolean, pool: Pool): number {
  const server = new Server();
  server.on('request', () => undefined);
  if (withMetrics)
    timeRequests(
      server,
      new ApiMetrics({
        pools: { statements: pool },
        fairQueue: new FairQueue({ seats: 10, deadlineMs: 5_000, maxWaiting: 500 }),
        requestsInFlight: () => 0,
      }),
    );
  const socket = new Socket();
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const request = Object.assign(new IncomingMessage(socket), {
      method: 'GET',
      route: { path: ROUTES[i % ROUTES.length] },
    });
    const response = new ServerResponse(request);
    response.statusCode = 200;
    server.emit('request', request, response);
    response.emit('finish');
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / REQUESTS;
}

function main(): void {
  // Never connected: the gauges are only read when scraped.
  const pool = new Pool();
  const off: number[] = [];
  const on: number[] = [];
  // Alternating, so that the machine's drift weighs on both alike.
  for (let round = 0; round < ROUNDS; round++) {
    off.push(run(false, pool));
    on.push(run(true, pool));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
  console.log(`CPU ns per request, metrics off: ${off.map(Math.round).join(', ')}`);
  console.log(`CPU ns per request, metrics on:  ${on.map(Math.round).join(', ')}`);
  console.log(
    `the metrics' own cost (medians): ${Math.round(median(on) - median(off))} ns per request`,
  );
}

main();
