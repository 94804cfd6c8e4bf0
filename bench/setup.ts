import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { displayPrefix, generateApiKey, hashApiKey } from '../src/auth/api-key';
import { applyMigrations } from '../src/database/migrator';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/dev/embedded-postgres';
import { generateBenchData, LARGE_WORKSPACE_ID } from './data';
import { withClient } from './with-client';
import { ROOT, log, now, reuseData, scale, secret, smoke } from './run-settings';

/*
 * The bench's database (its data and keys), the machine it describes, and the report file.
 */

export async function openDatabase(): Promise<{ url: string; stop: () => Promise<void> }> {
  let serverUrl = process.env.BENCH_DATABASE_URL;
  let embedded: EmbeddedDatabase | undefined;
  if (!serverUrl) {
    const local = 'postgresql://postgres@127.0.0.1:5432/visitor_api_bench';
    if (await answers(local.replace(/[^/]+$/, 'postgres'))) {
      serverUrl = local;
    } else {
      log('no PostgreSQL on 127.0.0.1:5432: starting an embedded one');
      embedded = await startEmbeddedPostgres('bench-postgres');
      serverUrl = embedded.url.replace(/[^/]+$/, 'visitor_api_bench');
    }
  }
  const url = new URL(serverUrl);
  const name = decodeURIComponent(url.pathname.slice(1)) + (smoke ? '_smoke' : '');
  if (!name.includes('bench')) throw new Error('the benchmark database name must contain "bench"');
  url.pathname = `/${name}`;
  return { url: url.toString(), stop: async () => embedded?.stop() };
}

export async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Migrates a fresh database and fills it; returns the seconds the data took. */
export async function prepareData(url: string): Promise<number | undefined> {
  const maintenance = url.replace(/\/[^/]*$/, '/postgres');
  const name = new URL(url).pathname.slice(1);
  if (reuseData && (await answers(url))) {
    const filled = await withClient(url, async (client) => {
      const { rows } = await client.query<{ companies: string; visits: string }>(
        `SELECT (SELECT count(*) FROM companies WHERE workspace_id = $1) AS companies,
           (SELECT count(*) FROM visits WHERE workspace_id = $1) AS visits`,
        [LARGE_WORKSPACE_ID],
      );
      return (
        Number(rows[0].companies) === scale.largeCompanies &&
        Number(rows[0].visits) === scale.largeVisits
      );
    }).catch(() => false);
    if (filled) {
      log(`reusing the data of ${name}`);
      return undefined;
    }
  }
  await withClient(maintenance, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await client.query(`CREATE DATABASE "${name}"`);
  });
  await applyMigrations({
    databaseUrl: url,
    migrationsDir: join(ROOT, 'prisma', 'migrations'),
    log: () => undefined,
  });
  const started = performance.now();
  await withClient(url, async (client) => {
    await generateBenchData(client, scale, now, log);
    // The generator vacuums the tables it fills; the triggers filled these. Without statistics
    // (autovacuum is off on our CI machines) the feed's first page is planned as a scan of the
    // whole workspace and a sort: about 1 s instead of 50 ms (docs/benchmarks.md, "The change feeds
    // and the stream").
    await client.query(
      'VACUUM (ANALYZE) company_day_counts, lead_day_counts, company_changes, lead_changes',
    );
  });
  const elapsed = (performance.now() - started) / 1000;
  log(`data generated in ${elapsed.toFixed(0)} s`);
  return elapsed;
}

/** `count` more keys of one workspace, made as the admin tool makes them. */
export async function extraKeys(
  url: string,
  workspaceId: string,
  count: number,
): Promise<string[]> {
  const made = Array.from({ length: count }, () => generateApiKey());
  await withClient(url, (client) =>
    client.query(
      `INSERT INTO api_keys (id, workspace_id, name, prefix, hash)
       SELECT gen_random_uuid()::text, $1, 'noisy', prefix, hash
       FROM unnest($2::text[], $3::text[]) AS k(prefix, hash)`,
      [workspaceId, made.map(displayPrefix), made.map((key) => hashApiKey(key, secret))],
    ),
  );
  return made;
}

/** One key per workspace, made as the admin tool makes them (hash under the run's secret). */
export async function createKeys(url: string): Promise<Map<string, string>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ id: string }>('SELECT id FROM workspaces ORDER BY id');
    const keys = new Map(rows.map(({ id }) => [id, generateApiKey()]));
    await client.query('DELETE FROM api_keys');
    await client.query(
      `INSERT INTO api_keys (id, workspace_id, name, prefix, hash)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`,
      [
        [...keys.keys()].map(() => randomUUID()),
        [...keys.keys()],
        [...keys.keys()].map(() => 'benchmark'),
        [...keys.values()].map(displayPrefix),
        [...keys.values()].map((key) => hashApiKey(key, secret)),
      ],
    );
    await client.query('VACUUM ANALYZE api_keys');
    return keys;
  });
}

/** The machine a run measured on, for the report. */
export interface Machine {
  cpu: string;
  memoryGb: number;
  postgres: string;
  date: string;
}

export async function describeMachine(url: string): Promise<Machine> {
  const settings = await withClient(url, async (client) => {
    const { rows } = await client.query<{ version: string; buffers: string }>(
      "SELECT current_setting('server_version') AS version, current_setting('shared_buffers') AS buffers",
    );
    return rows[0];
  });
  return {
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    postgres: `PostgreSQL ${settings.version}, shared_buffers ${settings.buffers}, on the same machine`,
    date: now.toISOString(),
  };
}

/** Replaces the generated part of the report, between its markers, and keeps the rest. */
export function writeReport(file: string, generated: string): void {
  const START = '<!-- bench:results:start -->';
  const END = '<!-- bench:results:end -->';
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // a new file
  }
  const block = `${START}\n${generated}\n${END}`;
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + block + current.slice(end + END.length)
      : `${current}${current ? '\n' : ''}${block}\n`;
  writeFileSync(file, next);
}
