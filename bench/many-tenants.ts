import { Agent } from 'node:http';
import { get } from './quiet-reader';
import type { Target } from './targets';

/*
 * Workload (t), "many tenants": many workspaces at their in-flight limit at once, none beyond it.
 * One reads the large workspace's first page of 200 companies, the others pages of 5 companies of
 * small workspaces, each sending as many requests at once as its limit allows; each wave goes when
 * the last is answered, for the period. Such a wave is work the service drains well within
 * QUEUE_DEADLINE_MS, so it must serve all of it: the target is no 503 (and no other refusal), with
 * each workspace's p99 reported.
 */

export interface ManyTenantsRun {
  workspaces: number;
  requestsPerWave: number;
  waves: number;
  statuses: Record<string, number>;
  perWorkspace: WorkspaceReads[];
  servedRps: number;
  peakRssMb: number;
}

export const MANY_TENANTS_TARGETS: Target<ManyTenantsRun>[] = [
  {
    says: 'many tenants at their limit: 503 answers 0',
    figure: (run) => run.statuses['503'] ?? 0,
    atMost: 0,
    unit: '',
  },
  {
    says: 'many tenants: answers other than 200: 0',
    figure: (run) =>
      Object.entries(run.statuses)
        .filter(([status]) => status !== '200')
        .reduce((sum, [, count]) => sum + count, 0),
    atMost: 0,
    unit: '',
  },
  { says: 'peak RSS <= 256 MiB', figure: (run) => run.peakRssMb, atMost: 256, unit: 'MB' },
];

export interface WorkspaceReads {
  name: string;
  count: number;
  p50: number;
  p99: number;
  notServed: number;
}

export interface ManyTenantsOptions {
  port: number;
  heavy: { path: string; key: string };
  light: { path: string; keys: string[] };
  inFlightLimit: number;
  seconds: number;
  residentMb: () => number;
  log: (line: string) => void;
}

interface Tenant {
  name: string;
  path: string;
  key: string;
  latencies: number[];
  notServed: number;
}

export async function measureManyTenants(options: ManyTenantsOptions): Promise<ManyTenantsRun> {
  const tenants: Tenant[] = [
    { name: 'heavy', ...options.heavy, latencies: [], notServed: 0 },
    ...options.light.keys.map((key, i) => ({
      name: `light ${i + 1}`,
      path: options.light.path,
      key,
      latencies: [],
      notServed: 0,
    })),
  ];
  const requestsPerWave = tenants.length * options.inFlightLimit;
  const agent = new Agent({ keepAlive: true, maxSockets: requestsPerWave });
  const statuses: Record<string, number> = {};
  let peakRssMb = options.residentMb();
  const sampler = setInterval(() => (peakRssMb = Math.max(peakRssMb, options.residentMb())), 50);
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  let waves = 0;
  let served = 0;
  try {
    while (performance.now() < deadline) {
      await Promise.all(
        tenants.flatMap((tenant) =>
          Array.from({ length: options.inFlightLimit }, async () => {
            const sent = performance.now();
            const { status } = await get({ port: options.port, ...tenant }, agent);
            statuses[status || 'no answer'] = (statuses[status || 'no answer'] ?? 0) + 1;
            if (status === 200) {
              served++;
              tenant.latencies.push(performance.now() - sent);
            } else tenant.notServed++;
          }),
        ),
      );
      waves++;
    }
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
  const servedRps = served / ((performance.now() - started) / 1000);
  const perWorkspace = tenants.map(({ name, latencies, notServed }) => {
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    return { name, count: latencies.length, p50: at(0.5), p99: at(0.99), notServed };
  });
  const worst = Math.max(...perWorkspace.map(({ p99 }) => p99));
  options.log(
    `many tenants: ${tenants.length} workspaces, ${waves} waves of ${requestsPerWave}: ` +
      `${JSON.stringify(statuses)}; ${servedRps.toFixed(1)} pages/s; worst p99 ` +
      `${worst.toFixed(1)} ms; peak RSS ${peakRssMb.toFixed(0)} MB`,
  );
  return {
    workspaces: tenants.length,
    requestsPerWave,
    waves,
    statuses,
    perWorkspace,
    servedRps,
    peakRssMb,
  };
}
