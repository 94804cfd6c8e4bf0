import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { findFreePort } from '../../src/dev/free-port';
import { type BuiltProcess, spawnBuilt } from '../support/built-process';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { until } from '../support/until';

/*
 * The container's command, `node dist/server/entrypoint.js` (migrations, then the server, in one
 * process), stopped with SIGTERM at each moment of its life: waiting for the migration lock,
 * starting, serving. Every stop ends in exit 0 within the server's drain grace period.
 */
const MIGRATIONS = readdirSync(join(__dirname, '../..', 'prisma', 'migrations'), {
  withFileTypes: true,
}).filter((entry) => entry.isDirectory()).length;
// The migrator's advisory lock (src/database/migrator.ts), Prisma's.
const MIGRATE_LOCK_KEY = 72707369;
// graceful-shutdown.ts: in-flight requests get 10 s; a stop must not take longer than that.
const GRACE_MS = 10_000;

interface Started extends BuiltProcess {
  port: number;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function database(options: { migrated: boolean }): Promise<TestDatabase> {
  const created = await createTestDatabase(options);
  cleanups.push(() => created.drop());
  return created;
}

async function startEntrypoint(db: TestDatabase): Promise<Started> {
  const port = await findFreePort();
  const started = spawnBuilt('server/entrypoint.js', {
    databaseUrl: db.url,
    env: {
      // Through PgBouncer (.ci/pgbouncer-suite), the migrations take the direct URL.
      DATABASE_MIGRATION_URL: db.directUrl,
      PORT: String(port),
      LOG_LEVEL: 'info',
    },
  });
  const child = started.process;
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    return Promise.resolve();
  });
  return { ...started, port };
}

/** SIGTERM, then how the process ended, or 'still running' past the grace period. */
async function stop(started: Started): Promise<unknown> {
  started.process.kill('SIGTERM');
  let bound: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    started.exited,
    new Promise((resolve) => (bound = setTimeout(() => resolve('still running'), GRACE_MS))),
  ]);
  clearTimeout(bound);
  return outcome;
}

/** Polls `check` while the process runs (a check that throws is not yet); fails once it exits. */
function whileRunning(
  what: string,
  started: Started,
  check: () => Promise<boolean> | boolean,
): Promise<true> {
  return until(
    what,
    () => {
      if (started.process.exitCode !== null) {
        throw new Error(`The process exited before ${what}. Output:\n${started.output.join('')}`);
      }
      return Promise.resolve()
        .then(check)
        .catch(() => false);
    },
    { withinMs: 20_000, detail: () => `Output:\n${started.output.join('')}` },
  );
}

function messages(started: Started): string[] {
  return started.output
    .join('')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
}

it('SIGTERM while waiting for the migration lock: exit 0 at once', async () => {
  const db = await database({ migrated: false });
  const locker = new Client({ connectionString: db.directUrl });
  await locker.connect();
  cleanups.push(() => locker.end());
  await locker.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK_KEY]);

  const started = await startEntrypoint(db);
  // The runner asks for the lock again and again (src/database/migrator.ts), and says it waits.
  await whileRunning('the run to wait for the migration lock', started, () =>
    messages(started).some((message) => message.startsWith('Waiting for the migration lock')),
  );

  expect(await stop(started)).toEqual({ code: 0, signal: null });
  expect(messages(started).at(-1)).toBe('SIGTERM before serving: exiting');
}, 60_000);

it('SIGTERM while the server starts (migrations done): exit 0', async () => {
  const db = await database({ migrated: true });
  const started = await startEntrypoint(db);
  await whileRunning('the migrations to be checked', started, () =>
    messages(started).includes('No pending migrations'),
  );

  expect(await stop(started)).toEqual({ code: 0, signal: null });
}, 60_000);

it('a SIGTERM that comes while the start holds the event loop still drains: exit 0', async () => {
  // The server's start hands the signals over to its drain in the turn in which it listens
  // (start-signals.ts). A signal received during that turn's JavaScript is handled in the next
  // one: the drain must still get it, not be lost with a listener removed meanwhile.
  const script = `
    const { exitOnSignalUntilServing, handOverSignals } = require(${JSON.stringify(
      join(__dirname, '../..', 'dist', 'server', 'start-signals.js'),
    )});
    exitOnSignalUntilServing();
    process.stdout.write('busy\\n');
    const until = Date.now() + 1500;
    while (Date.now() < until);
    handOverSignals((signal) => { process.stdout.write('drained ' + signal + '\\n'); process.exit(0); });
    setTimeout(() => process.exit(3), 5000);
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => Promise.resolve(child.kill('SIGKILL')));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  await until('the script to be busy', () => output.includes('busy'));
  child.kill('SIGTERM');

  expect(await exited).toBe(0);
  expect(output).toBe('busy\ndrained SIGTERM\n');
});

it('migrates an empty database, serves, and drains on SIGTERM: exit 0', async () => {
  const db = await database({ migrated: false });
  const started = await startEntrypoint(db);
  await whileRunning('/health/live', started, async () => {
    const response = await fetch(`http://127.0.0.1:${started.port}/health/live`);
    return response.status === 200;
  });
  const client = new Client({ connectionString: db.url });
  await client.connect();
  cleanups.push(() => client.end());
  const { rows } = await client.query<{ applied: number }>(
    'SELECT count(*)::int AS applied FROM _prisma_migrations WHERE finished_at IS NOT NULL',
  );
  expect(rows[0].applied).toBe(MIGRATIONS);

  expect(await stop(started)).toEqual({ code: 0, signal: null });
  // The server's drain ran (graceful-shutdown.ts), not the exit of the start.
  expect(messages(started).at(-1)).toBe('Shut down');
}, 60_000);

it('npm run db:migrate on a malformed DATABASE_URL: the one-line error naming it, no connection tried', async () => {
  const migrate = spawnBuilt('database/migrate.js', { databaseUrl: 'base' });
  expect(await migrate.exited).toMatchObject({ code: 1 });
  expect(migrate.output.join('')).toBe(
    'Invalid configuration: DATABASE_URL must be a postgresql:// connection URL\n',
  );
}, 60_000);
