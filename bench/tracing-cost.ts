import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyMigrations } from '../src/database/migrator';
import { generateBenchData, smallWorkspaceId } from './data';
import { type LoadResult, measure, summarize } from './load';
import { log, now, reuseData, ROOT, seconds } from './run-settings';
import type { Workload } from './workload';
import { type RunningServer, SERVICE_NODE_FLAGS, startServer, stopServer } from './servers';
import { answers, createKeys } from './setup';
import { withClient } from './with-client';
import { join } from 'node:path';

/*
 * What tracing costs on workloads (a) (page one of companies, limit=50, random small workspaces)
 * and (e) (`GET /v1/me`, random keys): the built service, started as production starts it (the
 * shipped node flags), with tracing off, with it on (every span exported over OTLP/HTTP to a sink
 * in this process that reads and drops what it is sent), and off again, alternated in rounds so
 * that the machine's drift weighs on both alike. Reported as ratios of the same run: throughput,
 * p50, p99 and the service's CPU per request, on against off, and the CPU that tracing adds to a
 * request in µs (the targets: at least 0.9 of (a)'s throughput, at most 40 µs on (e)).
 * `npm run bench:tracing` (BENCH_DATABASE_URL: a database whose name contains "bench", dropped and
 * made again, or kept with --reuse-data; BENCH_SECONDS per measurement, 10 by default;
 * BENCH_ROUNDS, 3; BENCH_TRACING_ENV, more OTEL_* variables for the traced server).
 */
const SCALE = {
  largeCompanies: 1_000,
  largeLeads: 300,
  smallWorkspaces: 200,
  smallCompanies: 1_000,
  smallLeads: 300,
  contactsPerCompany: 3,
  largeVisits: 0,
  smallVisits: 0,
};
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** BENCH_TRACING_ENV: more variables for the traced server, `A=1 B=2` (to compare settings). */
function extraEnv(): Record<string, string> {
  const pairs = (process.env.BENCH_TRACING_ENV ?? '').split(/\s+/).filter(Boolean);
  return Object.fromEntries(pairs.map((pair) => pair.split('=', 2) as [string, string]));
}

async function prepare(url: string): Promise<Map<string, string>> {
  const name = new URL(url).pathname.slice(1);
  if (!name.includes('bench'))
    throw new Error('BENCH_DATABASE_URL must name a database with "bench"');
  if (reuseData && (await answers(url))) return createKeys(url);
  await withClient(url.replace(/\/[^/]*$/, '/postgres'), async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  await applyMigrations({
    databaseUrl: url,
    migrationsDir: join(ROOT, 'prisma', 'migrations'),
    log: () => undefined,
  });
  await withClient(url, (client) => generateBenchData(client, SCALE, now, log));
  return createKeys(url);
}

/** An OTLP/HTTP receiver that reads every body and drops it: the cost of receiving, not more. */
async function startSink(): Promise<{ url: string; bytes: () => number; close: () => void }> {
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => response.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bytes: () => bytes, close: () => server.close() };
}

async function main(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL;
  if (!url) throw new Error('Set BENCH_DATABASE_URL');
  const keys = await prepare(url);
  const keysOfSmall = Array.from({ length: SCALE.smallWorkspaces }, (_, i) =>
    keys.get(smallWorkspaceId(i + 1))!,
  );
  const workloads: Workload[] = [
    {
      id: 'a',
      title: 'page one of companies, limit=50, random small workspaces',
      requests: keysOfSmall.map((key) => ({ path: '/v1/companies?limit=50', key })),
      statements: () => [],
    },
    {
      id: 'e',
      title: 'GET /v1/me, random keys',
      requests: keysOfSmall.map((key) => ({ path: '/v1/me', key })),
      statements: () => [],
    },
  ];
  const sink = await startSink();
  const results = new Map(
    workloads.map((w) => [w.id, { off: [] as LoadResult[], on: [] as LoadResult[] }]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const env: Record<string, string> =
        mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, ...extraEnv() } : {};
      const server: RunningServer = await startServer('service', url, env);
      try {
        for (const workload of workloads)
          results.get(workload.id)![mode].push(await measure(server, workload));
        log(`round ${round + 1}, tracing ${mode}: done`);
      } finally {
        await stopServer(server);
      }
    }
  }
  sink.close();
  const ratio = (a: number, b: number) => (a / b).toFixed(3);
  console.log(`node flags: ${SERVICE_NODE_FLAGS.join(' ')}; ${ROUNDS} rounds of ${seconds} s`);
  console.log(`| workload | tracing | req/s | p50 ms | p99 ms | CPU µs/request | peak RSS MB |`);
  console.log(`| -------- | ------- | ----- | ------ | ------ | -------------- | ----------- |`);
  for (const { id } of workloads) {
    for (const mode of ['off', 'on'] as const) {
      const m = summarize('service', id, results.get(id)![mode]);
      console.log(
        `| ${id} | ${mode} | ${m.rps.toFixed(0)} | ${m.p50} | ${m.p99} | ${((m.cpuMsPerRequest ?? NaN) * 1000).toFixed(0)} | ${m.peakRssMb.toFixed(0)} |`,
      );
    }
  }
  for (const { id } of workloads) {
    const off = summarize('service', id, results.get(id)!.off);
    const on = summarize('service', id, results.get(id)!.on);
    const addedCpuUs = ((on.cpuMsPerRequest ?? NaN) - (off.cpuMsPerRequest ?? NaN)) * 1000;
    console.log(
      `(${id}) on/off: throughput ${ratio(on.rps, off.rps)}, p50 ${ratio(on.p50, off.p50)}, p99 ` +
        `${ratio(on.p99, off.p99)}, CPU per request ${ratio(on.cpuMsPerRequest ?? NaN, off.cpuMsPerRequest ?? NaN)} ` +
        `(+${addedCpuUs.toFixed(0)} µs)`,
    );
  }
  console.log(`${(sink.bytes() / 1e6).toFixed(1)} MB of spans received`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
