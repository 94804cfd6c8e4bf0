import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LARGE_WORKSPACE_ID, smallWorkspaceId, visitStorage } from './data';
import { checkFeedPages, measureImports, measureSync } from './feeds';
import { cpuSeconds } from './compression';
import { renderReport, type Report } from './report';
import { measureWebhooks } from './webhooks';
import { measureFairQueueCost } from './fair-queue-cost';
import { measureChangeStream } from './change-stream';
import { lookupValues } from './lookups';
import { measureManyTenants } from './many-tenants';
import { measureNoisyNeighbour } from './noisy-neighbour';
import { measureRefusalCost } from './refusal-cost';
import { measureVisitImport } from './visit-import';
import {
  FEED_LIMIT,
  IMPORT,
  LIST_LIMIT,
  VISIT_IMPORT,
  now,
  ROOT,
  type ServerName,
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
  writeReport,
} from './setup';
import { withClient } from './with-client';
import {
  WORKLOADS,
  feedPath,
  locateFeedPages,
  revalidatedPage,
  workloadContext,
} from './workloads';
import { locateVisitCases, visitedShares } from './visit-workloads';
import { type Workload, type WorkloadContext, workloadOf } from './workload';
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

/** What the measurements after the request workloads are made of. */
interface RunContext {
  databaseUrl: string;
  keys: Map<string, string>;
  largeKey: string;
  /** The servers still running: the service, and the service with its metrics on. */
  servers: Map<ServerName, RunningServer>;
  /** The request workloads' context, for a workload a measurement loads ((w) loads (a)). */
  workloads: WorkloadContext;
}

/** A measurement beyond the request workloads, selected by its id as they are. */
interface Special {
  id: string;
  /** What it adds to the report. */
  measure(run: RunContext): Promise<Partial<Report>>;
}

const running = (run: RunContext, name: ServerName): RunningServer => {
  const server = run.servers.get(name);
  if (!server) throw new Error(`the ${name} server is not running`);
  return server;
};
const smallKey = (run: RunContext, i: number) => run.keys.get(smallWorkspaceId(i)) ?? '';

/**
 * The measurements of the service alone (and of the one with metrics), in this order, after the
 * request workloads; the other servers are stopped first, for each holds a dozen connections of
 * the database's hundred, and (x) starts one more service.
 */
const WITH_THE_SERVICE: Special[] = [
  {
    id: 'h',
    measure: async (run) => ({
      sync: await measureSync(`http://127.0.0.1:${running(run, 'service').port}`, run.largeKey),
    }),
  },
  {
    id: 's',
    measure: async (run) => {
      const service = running(run, 'service');
      const changeStream = await measureChangeStream({
        port: service.port,
        databaseUrl: run.databaseUrl,
        large: {
          workspaceId: LARGE_WORKSPACE_ID,
          key: run.largeKey,
          companies: scale.largeCompanies,
        },
        small: { key: smallKey(run, 3), companies: scale.smallCompanies },
        quiet: { path: '/v1/companies?limit=50', key: smallKey(run, 1) },
        seconds,
        residentMb: () => residentMb(service.child.pid),
        log,
      });
      return { changeStream };
    },
  },
  {
    // The service with its metrics on, as operations run it: its event-loop delay and GC pauses
    // are read there during each phase. The quiet workspace: a small one; the noisy one: another
    // small one's key ten times over (each key of a workspace shares its in-flight limit), on its
    // first page of 200.
    id: 'n',
    measure: async (run) => {
      const service = running(run, 'metrics');
      const noisyNeighbour = await measureNoisyNeighbour({
        port: service.port,
        metricsPort: service.metricsPort,
        quiet: { path: '/v1/companies?limit=50', key: smallKey(run, 1) },
        noisy: {
          path: `/v1/companies?limit=${LIST_LIMIT}`,
          keys: await extraKeys(run.databaseUrl, smallWorkspaceId(2), 10),
        },
        inFlightLimit: 20,
        seconds,
        waveSize: 300,
        residentMb: () => residentMb(service.child.pid),
        serviceCpuSeconds: () => cpuSeconds(service.child.pid),
        log,
      });
      return { noisyNeighbour };
    },
  },
  {
    // The heavy workspace: the large one's first page of 200; the light ones: small workspaces'
    // pages of 5 (as many as the data has, at most 19).
    id: 't',
    measure: async (run) => {
      const service = running(run, 'service');
      const light = Math.min(19, scale.smallWorkspaces);
      const manyTenants = await measureManyTenants({
        port: service.port,
        heavy: { path: `/v1/companies?limit=${LIST_LIMIT}`, key: run.largeKey },
        light: {
          path: '/v1/companies?limit=5',
          keys: Array.from({ length: light }, (_, i) => smallKey(run, i + 1)),
        },
        inFlightLimit: 20,
        seconds,
        residentMb: () => residentMb(service.child.pid),
        log,
      });
      return { manyTenants };
    },
  },
  {
    id: 'x',
    measure: async (run) => {
      const limited = await startServer('service', run.databaseUrl, {
        MAX_IN_FLIGHT_PER_WORKSPACE: '1',
      });
      try {
        const refusalCost = await measureRefusalCost({
          port: limited.port,
          key: smallKey(run, 1),
          databaseUrl: run.databaseUrl,
          seconds,
          serviceCpuSeconds: () => cpuSeconds(limited.child.pid),
        });
        log(`refusal cost: ${JSON.stringify(refusalCost)}`);
        return { refusalCost };
      } finally {
        await stopServer(limited);
      }
    },
  },
  {
    id: 'w',
    measure: async (run) => {
      const servicePort = running(run, 'service').port;
      const declared = WORKLOADS.find(({ id }) => id === 'a');
      if (!declared) throw new Error('workload (a) is not declared');
      const pageOne = workloadOf(declared, run.workloads);
      const webhooks = await measureWebhooks({
        databaseUrl: run.databaseUrl,
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
      return { webhooks };
    },
  },
];

/** The measurements with no server running, after pgbench. */
const WITHOUT_SERVERS: Special[] = [
  {
    id: 'q',
    measure: async () => {
      const fairQueueCost = await measureFairQueueCost();
      log(`fair queue: ${JSON.stringify(fairQueueCost)} ns of CPU per statement`);
      return { fairQueueCost };
    },
  },
  {
    id: 'i',
    measure: async (run) => {
      log(
        `imports of ${IMPORT.companies} companies, ${IMPORT.rounds} each with change tracking ` +
          'on and off',
      );
      const imports = await withClient(run.databaseUrl, (client) =>
        measureImports(
          client,
          { DATABASE_URL: run.databaseUrl, API_KEY_SECRET: secret },
          { workspaceId: LARGE_WORKSPACE_ID, ...IMPORT },
          log,
        ),
      );
      return { imports };
    },
  },
  {
    id: 'vi',
    measure: async (run) => {
      log(
        `visit imports of ${VISIT_IMPORT.pageViews} page views, ${VISIT_IMPORT.rounds} rounds ` +
          'of the import with tracking on, COPY, and the import with tracking off',
      );
      const visitImport = await withClient(run.databaseUrl, (client) =>
        measureVisitImport(
          client,
          {
            cli: join(ROOT, 'dist', 'cli', 'main.js'),
            env: { DATABASE_URL: run.databaseUrl, API_KEY_SECRET: secret },
            sourceWorkspace: LARGE_WORKSPACE_ID,
            ...VISIT_IMPORT,
            now,
          },
          log,
        ),
      );
      return { visitImport };
    },
  },
];

/**
 * Starts every server, checks that they answer alike, then measures each request workload on
 * each of its servers in ORDER, into the report.
 */
async function measureWorkloads(
  report: Report,
  servers: Map<ServerName, RunningServer>,
  workloads: Workload[],
  run: { databaseUrl: string; keys: Map<string, string>; feedPages: FeedPageChecks },
): Promise<void> {
  const samples = new Map<ServerName, (string | null)[]>();
  for (const name of STARTED) {
    const started = await startServer(name, run.databaseUrl);
    servers.set(name, started);
    report.startup[name] = started.startupMs;
    log(`${name}: ready in ${started.startupMs.toFixed(0)} ms`);
    samples.set(name, await fetchSamples(started, workloads));
  }
  checkSameAnswers(samples);
  if (workloads.some(({ id }) => id === 'b-br')) {
    report.compressionLevels = await levelsOnAPage(servers, run.keys);
  }
  const serviceUrl = `http://127.0.0.1:${servers.get('service')?.port}`;
  await checkFeedPages(serviceUrl, run.keys.get(LARGE_WORKSPACE_ID) ?? '', run.feedPages);
  for (const workload of workloads) {
    const runs = new Map<ServerName, LoadResult[]>();
    for (const name of ORDER) {
      const server = servers.get(name);
      if (!server || !(workload.servers ?? SERVERS).includes(name)) continue;
      runs.set(name, [...(runs.get(name) ?? []), await measure(server, workload)]);
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
}

type FeedPageChecks = Parameters<typeof checkFeedPages>[2];

/** The run's failures, after its report is written: a failed request, a no-op import's change. */
function checkRun(report: Report): void {
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
}

/**
 * `npm run bench`: the service against the bare limit and the naive implementation, on the same
 * data, one server after another, and pgbench running the service's SQL as the ceiling.
 * `npm run bench -- --smoke`: the same on small data for a second per workload (CI), checking
 * only that everything runs and answers alike. Environment:
 * - BENCH_DATABASE_URL: a server and a database whose name contains "bench"; it is dropped and
 *   recreated. Default: the local PostgreSQL on 5432 if it answers, else an embedded one.
 * - BENCH_SECONDS (each measured period), BENCH_CONNECTIONS; BENCH_WORKLOADS=a,e to run only
 *   those (the report then goes to the temporary directory): the request workloads' ids
 *   (workloads.ts, visit-workloads.ts) and the other measurements' (h, s, n, t, x, w, q, i, vi
 *   above).
 * - --reuse-data: keep the data of a previous run of the same scale (while iterating).
 */
async function main(): Promise<void> {
  const database = await openDatabase();
  try {
    const generation = await prepareData(database.url);
    const keys = await createKeys(database.url);
    // BENCH_WORKLOADS=a,e runs only those (while iterating; a committed report has them all).
    const only = process.env.BENCH_WORKLOADS?.split(',');
    const selected = ({ id }: { id: string }) => !only || only.includes(id);
    const feedPages = (await locateFeedPages(database.url)).filter(selected);
    const revalidated = await revalidatedPage(database.url);
    const lookups = await lookupValues(database.url);
    const visits = await locateVisitCases(database.url);
    const storage = await withClient(database.url, visitStorage);
    const shares = await visitedShares(database.url);
    log(`visits: ${JSON.stringify(storage)}; viewed by: ${JSON.stringify(shares)}`);
    const context = workloadContext(keys, feedPages, revalidated, lookups, visits);
    const workloads = WORKLOADS.filter(selected).map((declared) => workloadOf(declared, context));
    const report: Report = {
      smoke,
      scale,
      seconds,
      connections,
      generation,
      visitData: { storage, shares },
      machine: await describeMachine(database.url),
      node: { ...nodeVersions(), serviceFlags: SERVICE_NODE_FLAGS },
      startup: {},
      workloads: workloads.map(({ id, title }) => ({ id, title })),
      measurements: [],
      ceiling: [],
    };
    const run: RunContext = {
      databaseUrl: database.url,
      keys,
      largeKey: keys.get(LARGE_WORKSPACE_ID) ?? '',
      servers: new Map(),
      workloads: context,
    };
    try {
      await measureWorkloads(report, run.servers, workloads, {
        databaseUrl: database.url,
        keys,
        feedPages: feedPages.map((page) => ({
          ...page,
          path: feedPath(page.after),
          size: FEED_LIMIT,
        })),
      });
      for (const [name, server] of run.servers) {
        if (name === 'service' || name === 'metrics') continue;
        await stopServer(server);
        run.servers.delete(name);
      }
      for (const special of WITH_THE_SERVICE.filter(selected)) {
        Object.assign(report, await special.measure(run));
      }
    } finally {
      for (const server of run.servers.values()) await stopServer(server);
    }
    report.ceiling = runPgbench(database.url, workloads);
    for (const special of WITHOUT_SERVERS.filter(selected)) {
      Object.assign(report, await special.measure(run));
    }
    const output =
      smoke || only
        ? join(tmpdir(), `benchmarks-${smoke ? 'smoke' : 'partial'}.md`)
        : join(ROOT, 'docs', 'benchmarks.md');
    writeReport(output, renderReport(report));
    log(`report written to ${output}`);
    checkRun(report);
  } finally {
    await database.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
