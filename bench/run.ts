import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LARGE_WORKSPACE_ID, smallWorkspaceId } from './data';
import { checkFeedPages, measureImports } from './feeds';
import { cpuSeconds } from './compression';
import { renderReport, type Report, type ServerName } from './report';
import { measureWebhooks } from './webhooks';
import { measureFairQueueCost } from './fair-queue-cost';
import { measureChangeStream } from './change-stream';
import { lookupValues } from './lookups';
import { measureManyTenants } from './many-tenants';
import { measureNoisyNeighbour } from './noisy-neighbour';
import { measureRefusalCost } from './refusal-cost';
import {
  FEED_LIMIT,
  IMPORT,
  LIST_LIMIT,
  ROOT,
  WEBHOOK_RATE,
  connections,
  log,
  scale,
  seconds,
  secret,
  smoke,
} from './run-settings';
import {
  createKeys,
  describeMachine,
  extraKeys,
  openDatabase,
  prepareData,
  withClient,
  writeReport,
} from './setup';
import {
  defineWorkloads,
  feedPath,
  locateFeedPages,
  measureSync,
  revalidatedPage,
} from './workloads';
import {
  ORDER,
  type RunningServer,
  SERVERS,
  SERVICE_NODE_FLAGS,
  STARTED,
  nodeVersions,
  residentMb,
  startServer,
  stopServer,
} from './servers';
import { type LoadResult, load, measure, summarize } from './load';
import { checkSameAnswers, fetchSamples, levelsOnAPage } from './samples';
import { runPgbench } from './pgbench';

/**
 * `npm run bench`: the service against the bare limit and the naive implementation, on the same
 * data, one server after another, and pgbench running the service's SQL as the ceiling.
 * `npm run bench -- --smoke`: the same on small data for a second per workload (CI), checking
 * only that everything runs and answers alike. Environment:
 * - BENCH_DATABASE_URL: a server and a database whose name contains "bench"; it is dropped and
 *   recreated. Default: the local PostgreSQL on 5432 if it answers, else an embedded one.
 * - BENCH_SECONDS (each measured period), BENCH_CONNECTIONS; BENCH_WORKLOADS=a,e to run only
 *   those (the report then goes to the temporary directory); h is the full sync through the feed
 *   and by offsets, i the imports with change tracking on and off.
 * - --reuse-data: keep the data of a previous run of the same scale (while iterating).
 */
async function main(): Promise<void> {
  const database = await openDatabase();
  try {
    const generation = await prepareData(database.url);
    const keys = await createKeys(database.url);
    // BENCH_WORKLOADS=a,e runs only those (while iterating; a committed report has them all).
    const only = process.env.BENCH_WORKLOADS?.split(',');
    const selected = (id: string) => !only || only.includes(id);
    const feedPages = (await locateFeedPages(database.url)).filter(({ id }) => selected(id));
    const revalidated = await revalidatedPage(database.url);
    const lookups = await lookupValues(database.url);
    const workloads = defineWorkloads(keys, feedPages, revalidated, lookups).filter(({ id }) =>
      selected(id),
    );
    const largeKey = keys.get(LARGE_WORKSPACE_ID) ?? '';
    const report: Report = {
      smoke,
      scale,
      seconds,
      connections,
      generation,
      machine: await describeMachine(database.url),
      node: { ...nodeVersions(), serviceFlags: SERVICE_NODE_FLAGS },
      startup: {},
      workloads: workloads.map(({ id, title }) => ({ id, title })),
      measurements: [],
      ceiling: [],
    };
    const servers = new Map<ServerName, RunningServer>();
    try {
      const samples = new Map<ServerName, (string | null)[]>();
      for (const name of STARTED) {
        const running = await startServer(name, database.url);
        servers.set(name, running);
        report.startup[name] = running.startupMs;
        log(`${name}: ready in ${running.startupMs.toFixed(0)} ms`);
        samples.set(name, await fetchSamples(running, workloads));
      }
      checkSameAnswers(samples);
      if (selected('b-br')) report.compressionLevels = await levelsOnAPage(servers, keys);
      const serviceUrl = `http://127.0.0.1:${servers.get('service')?.port}`;
      await checkFeedPages(
        serviceUrl,
        largeKey,
        feedPages.map((page) => ({ ...page, path: feedPath(page.after), size: FEED_LIMIT })),
      );
      for (const workload of workloads) {
        const runs = new Map<ServerName, LoadResult[]>();
        for (const name of ORDER) {
          const running = servers.get(name);
          if (!running || !(workload.servers ?? SERVERS).includes(name)) continue;
          runs.set(name, [...(runs.get(name) ?? []), await measure(running, workload)]);
        }
        for (const [name, results] of runs) {
          const measurement = summarize(name, workload.id, results);
          report.measurements.push(measurement);
          log(
            `${name} ${workload.id}: ${measurement.rps.toFixed(0)} req/s, p50 ` +
              `${measurement.p50.toFixed(2)} ms, p99 ${measurement.p99.toFixed(2)} ms, ` +
              `RSS ${measurement.peakRssMb.toFixed(0)} MB, failures ${measurement.failures}`,
          );
        }
      }
      // What follows measures the service alone (and the one with metrics): the other servers
      // stop first, for each holds a dozen connections of the database's hundred, and (x)
      // starts one more service.
      for (const [name, running] of servers) {
        if (name === 'service' || name === 'metrics') continue;
        await stopServer(running);
        servers.delete(name);
      }
      if (selected('h')) report.sync = await measureSync(serviceUrl, largeKey);
      if (selected('s')) {
        const service = servers.get('service');
        if (!service) throw new Error('the service is not running');
        report.changeStream = await measureChangeStream({
          port: service.port,
          databaseUrl: database.url,
          large: {
            workspaceId: LARGE_WORKSPACE_ID,
            key: largeKey,
            companies: scale.largeCompanies,
          },
          small: { key: keys.get(smallWorkspaceId(3)) ?? '', companies: scale.smallCompanies },
          quiet: { path: '/v1/companies?limit=50', key: keys.get(smallWorkspaceId(1)) ?? '' },
          seconds,
          residentMb: () => residentMb(service.child.pid),
          log,
        });
      }
      if (selected('n')) {
        // The service with its metrics on, as operations run it: its event-loop delay and GC
        // pauses are read there during each phase.
        const service = servers.get('metrics');
        if (!service) throw new Error('the service with metrics is not running');
        // The quiet workspace: a small one; the noisy one: another small one's key ten times over
        // (each key of a workspace shares its in-flight limit), on its first page of 200.
        const small = (i: number) => keys.get(smallWorkspaceId(i)) ?? '';
        report.noisyNeighbour = await measureNoisyNeighbour({
          port: service.port,
          metricsPort: service.metricsPort,
          quiet: { path: '/v1/companies?limit=50', key: small(1) },
          noisy: {
            path: `/v1/companies?limit=${LIST_LIMIT}`,
            keys: await extraKeys(database.url, smallWorkspaceId(2), 10),
          },
          inFlightLimit: 20,
          seconds,
          waveSize: 300,
          residentMb: () => residentMb(service.child.pid),
          serviceCpuSeconds: () => cpuSeconds(service.child.pid),
          log,
        });
      }
      if (selected('t')) {
        const service = servers.get('service');
        if (!service) throw new Error('the service is not running');
        // The heavy workspace: the large one's first page of 200; the light ones: small
        // workspaces' pages of 5 (as many as the data has, at most 19).
        const light = Math.min(19, scale.smallWorkspaces);
        report.manyTenants = await measureManyTenants({
          port: service.port,
          heavy: { path: `/v1/companies?limit=${LIST_LIMIT}`, key: largeKey },
          light: {
            path: '/v1/companies?limit=5',
            keys: Array.from({ length: light }, (_, i) => keys.get(smallWorkspaceId(i + 1)) ?? ''),
          },
          inFlightLimit: 20,
          seconds,
          residentMb: () => residentMb(service.child.pid),
          log,
        });
      }
      if (selected('x')) {
        const limited = await startServer('service', database.url, {
          MAX_IN_FLIGHT_PER_WORKSPACE: '1',
        });
        try {
          report.refusalCost = await measureRefusalCost({
            port: limited.port,
            key: keys.get(smallWorkspaceId(1)) ?? '',
            databaseUrl: database.url,
            seconds,
            serviceCpuSeconds: () => cpuSeconds(limited.child.pid),
          });
          log(`refusal cost: ${JSON.stringify(report.refusalCost)}`);
        } finally {
          await stopServer(limited);
        }
      }
      if (selected('w')) {
        const servicePort = servers.get('service')?.port ?? 0;
        const pageOne = defineWorkloads(keys, feedPages, revalidated, lookups).find(
          ({ id }) => id === 'a',
        );
        if (!pageOne) throw new Error('workload (a) is not defined');
        report.webhooks = await measureWebhooks({
          databaseUrl: database.url,
          workerMain: join(ROOT, 'dist', 'worker', 'main.js'),
          targetRate: WEBHOOK_RATE,
          seconds,
          backlog: smoke ? 1_000 : 10_000,
          serve: async (duration) => {
            const { latencies } = await load(servicePort, pageOne, duration);
            latencies.sort((a, b) => a - b);
            const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? NaN;
            return { rps: latencies.length / duration, p99 };
          },
          log,
        });
      }
    } finally {
      for (const running of servers.values()) await stopServer(running);
    }
    report.ceiling = runPgbench(database.url, workloads);
    if (selected('q')) {
      report.fairQueueCost = await measureFairQueueCost();
      log(`fair queue: ${JSON.stringify(report.fairQueueCost)} ns of CPU per statement`);
    }
    if (selected('i')) {
      log(
        `imports of ${IMPORT.companies} companies, ${IMPORT.rounds} each with change tracking ` +
          'on and off',
      );
      report.imports = await withClient(database.url, (client) =>
        measureImports(
          client,
          { DATABASE_URL: database.url, API_KEY_SECRET: secret },
          { workspaceId: LARGE_WORKSPACE_ID, ...IMPORT },
          log,
        ),
      );
    }
    const output =
      smoke || only
        ? join(tmpdir(), `benchmarks-${smoke ? 'smoke' : 'partial'}.md`)
        : join(ROOT, 'docs', 'benchmarks.md');
    writeReport(output, renderReport(report));
    log(`report written to ${output}`);
    const failed = report.measurements.filter((m) => m.failures > 0 && m.server !== 'naive');
    if (failed.length > 0) {
      throw new Error(
        `requests failed: ${failed.map((m) => `${m.server} ${m.workload}`).join(', ')}`,
      );
    }
    const noOp = report.imports?.noOp;
    if (noOp && noOp.companyChanges + noOp.leadChanges !== 0) {
      throw new Error(
        `the no-op re-import emitted changes: ${noOp.companyChanges} in company_changes, ` +
          `${noOp.leadChanges} in lead_changes (expected none)`,
      );
    }
  } finally {
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
