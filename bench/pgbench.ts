import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startupOptions } from '../src/database/pool-config';
import { type Measurement, connections, log, seconds, warmupSeconds } from './run-settings';
import type { SqlValue, Workload } from './workload';

/*
 * pgbench running the service's statements: the ceiling.
 */

/** A SQL literal for pgbench's simple protocol (its `:name` variables rule out parameters here). */
function literal(value: SqlValue): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return `'${value.toISOString()}'`;
  // An array's elements quoted: paths and page ranges hold `/`, `,` or control characters.
  const quoted = (element: string) => `"${element.replaceAll(/["\\]/g, '\\$&')}"`;
  const text = Array.isArray(value) ? `{${value.map(quoted).join(',')}}` : value;
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The database alone: pgbench runs each workload's statements, at the same concurrency, with one
 * script per request variant (pgbench picks one at random per transaction; at most 100).
 */
export function runPgbench(url: string, workloads: Workload[]): Measurement[] {
  const pgbench = findPgbench();
  if (!pgbench) {
    log('pgbench not found: no ceiling measured');
    return [];
  }
  const results: Measurement[] = [];
  for (const workload of workloads.filter(({ requests }) => requests.length > 0)) {
    if (workload.statements(workload.requests[0]).length === 0) continue;
    const dir = mkdtempSync(join(tmpdir(), `pgbench-${workload.id}-`));
    try {
      const scripts = workload.requests.slice(0, 100).map((request, i) => {
        const file = join(dir, `script-${i}.sql`);
        const text = workload
          .statements(request)
          .map(
            ([sql, values]) =>
              sql.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1])) + ';',
          )
          .join('\n');
        writeFileSync(file, text + '\n');
        return file;
      });
      const clients = workload.connections ?? connections;
      const args = [
        '-n',
        '-M',
        'simple',
        '-c',
        String(clients),
        '-j',
        String(Math.min(2, clients)),
      ];
      args.push('-l', '--log-prefix', join(dir, 'log'), ...scripts.flatMap((f) => ['-f', f]));
      // The service's session settings (jit off among them: compiling the plan of a statement
      // estimated as costly took pgbench 1.7 s of a (vp1) statement that runs in 40 ms).
      const env = { ...process.env, PGOPTIONS: startupOptions() };
      execFileSync(pgbench, [...args, '-T', String(warmupSeconds > 1 ? warmupSeconds : 1), url], {
        stdio: 'ignore',
        env,
      });
      for (const file of readdirSync(dir).filter((f) => f.startsWith('log')))
        rmSync(join(dir, file));
      execFileSync(pgbench, [...args, '-T', String(Math.max(1, Math.round(seconds))), url], {
        stdio: 'ignore',
        env,
      });
      const latencies = readdirSync(dir)
        .filter((file) => file.startsWith('log'))
        .flatMap((file) => readFileSync(join(dir, file), 'utf8').trim().split('\n'))
        .map((line) => Number(line.split(' ')[2]) / 1000)
        .sort((a, b) => a - b);
      const at = (q: number) => latencies[Math.floor(q * latencies.length)] ?? NaN;
      const measurement: Measurement = {
        server: 'pgbench',
        workload: workload.id,
        rps: latencies.length / Math.max(1, Math.round(seconds)),
        p50: at(0.5),
        p99: at(0.99),
        failures: 0,
        peakRssMb: NaN,
      };
      results.push(measurement);
      log(
        `pgbench ${workload.id}: ${measurement.rps.toFixed(0)} tps, p50 ${measurement.p50.toFixed(2)} ms`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

function findPgbench(): string | undefined {
  for (const candidate of ['pgbench', ...globBin()]) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

function globBin(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`);
  } catch {
    return [];
  }
}
