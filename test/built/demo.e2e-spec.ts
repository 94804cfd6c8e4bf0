import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { Client } from 'pg';
import { findFreePort } from '../../src/dev/free-port';
import { type BuiltProcess, spawnBuilt } from '../support/built-process';
import { directDatabaseUrl } from '../support/database';
import { until } from '../support/until';

/*
 * `npm run demo` (the README's quick start) as its built program, `node dist/dev/demo.js`, in a
 * checkout folder of its own: that it serves as production does and stops cleanly, what it says
 * when it cannot start, and that it never destroys what another demo owns.
 */
const running: BuiltProcess[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const demo of running.splice(0)) {
    if (demo.process.exitCode === null && demo.process.signalCode === null) {
      demo.process.kill('SIGINT');
      await demo.exited;
    }
  }
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function checkout(): string {
  const folder = mkdtempSync(join(tmpdir(), 'demo-checkout-'));
  // As a clone's folder is: run as root, the embedded initdb runs as another user.
  chmodSync(folder, 0o755);
  folders.push(folder);
  return folder;
}

/** The demo on its embedded PostgreSQL (no DATABASE_URL), as on a fresh machine. */
function startDemo(cwd: string, port: number, { ownProcessGroup = false } = {}): BuiltProcess {
  const demo = spawnBuilt('dev/demo.js', {
    databaseUrl: undefined,
    cwd,
    env: { NODE_ENV: 'development', PORT: String(port), API_KEY_SECRET: undefined },
    ownProcessGroup,
  });
  running.push(demo);
  return demo;
}

async function printedKey(demo: BuiltProcess): Promise<string> {
  return until(
    'the demo to print its key',
    () => {
      const key = /st_[0-9A-Za-z]{38,}/.exec(demo.output.join(''))?.[0];
      if (!key && demo.process.exitCode !== null) {
        throw new Error(`demo exited: ${demo.output.join('')}`);
      }
      return key;
    },
    { withinMs: 90_000, detail: () => demo.output.join('') },
  );
}

const run = promisify(execFile);

/** The built admin tool with only these variables (and PATH). */
async function admin(env: Record<string, string | undefined>, argv: string[]): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [join(__dirname, '../..', 'dist', 'cli', 'main.js'), ...argv],
    { cwd: tmpdir(), env: { PATH: process.env.PATH, ...env } },
  );
  return stdout;
}

async function companiesStatus(port: number, key: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/companies?limit=5`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  return response.status;
}

/** A list read with the key, on a kept-alive connection: its status and Keep-Alive header. */
function companies(port: number, key: string): Promise<{ status?: number; keepAlive?: string }> {
  return new Promise((resolve, reject) => {
    get(
      `http://127.0.0.1:${port}/v1/companies?limit=5`,
      { headers: { Authorization: `Bearer ${key}`, Connection: 'keep-alive' } },
      (response) => {
        response.resume();
        resolve({ status: response.statusCode, keepAlive: String(response.headers['keep-alive']) });
      },
    ).once('error', reject);
  });
}

it('serves as production does, and on Ctrl-C stops its database after its pools, and says so', async () => {
  const cwd = checkout();
  const port = await findFreePort();
  const demo = startDemo(cwd, port, { ownProcessGroup: true });
  const key = await printedKey(demo);
  // The server's timeouts (src/server/server-timeouts.ts), not Node's default of 5 s.
  expect(await companies(port, key)).toEqual({ status: 200, keepAlive: 'timeout=65' });
  const folder = `.data/demo-postgres-${demo.process.pid}`;
  expect(existsSync(join(cwd, folder))).toBe(true);
  const databaseUrl = /export DATABASE_URL='([^']+)'/.exec(demo.output.join(''))?.[1];

  // Ctrl-C in a terminal signals its whole process group: the demo and whatever it started; under
  // `npm run demo`, npm then forwards it to the demo once more, while it drains.
  process.kill(-(demo.process.pid ?? 0), 'SIGINT');
  await until('the drain to begin', () => demo.output.join('').includes('SIGINT: closing'), {
    detail: () => demo.output.join(''),
  });
  demo.process.kill('SIGINT');
  expect(await demo.exited).toEqual({ code: 0, signal: null });
  const output = demo.output.join('');
  expect(output).toContain('"msg":"Shut down"');
  // No pool had a connection cut under it ("Idle connection lost"), nor anything else to warn of.
  expect(output.split('\n').filter((line) => /"level":"(warn|error|fatal)"/.test(line))).toEqual(
    [],
  );
  expect(output.trimEnd().split('\n').at(-1)).toBe(
    `The demo stopped its embedded PostgreSQL and removed its folder, ${folder}.`,
  );
  expect(existsSync(join(cwd, folder))).toBe(false);
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000 });
  await expect(client.connect()).rejects.toThrow(/ECONNREFUSED/);
}, 120_000);

it('a second demo in the same checkout (port taken) leaves the running one and its data alone', async () => {
  const cwd = checkout();
  const port = await findFreePort();
  const first = startDemo(cwd, port);
  const key = await printedKey(first);
  expect(await companiesStatus(port, key)).toBe(200);
  const clusters = readdirSync(join(cwd, '.data'));

  const second = startDemo(cwd, port);
  expect(await second.exited).toMatchObject({ code: 1 });
  expect(second.output.join('')).toContain('PORT');

  // The first one's cluster is whole: it serves lists, which read its files.
  expect(await companiesStatus(port, key)).toBe(200);
  expect(readdirSync(join(cwd, '.data'))).toEqual(clusters);
  expect(clusters).toEqual([`demo-postgres-${first.process.pid}`]);

  // The admin tool, with what the demo printed for it: a key it makes works on the demo.
  const printed = first.output.join('');
  const exported = (name: string) => new RegExp(`export ${name}='([^']+)'`).exec(printed)?.[1];
  const made = await admin(
    { DATABASE_URL: exported('DATABASE_URL'), API_KEY_SECRET: exported('API_KEY_SECRET') },
    ['key', 'create', '--workspace', 'demo', '--name', 'from the admin tool', '--json'],
  );
  expect(await companiesStatus(port, (JSON.parse(made) as { key: string }).key)).toBe(200);

  first.process.kill('SIGINT');
  await first.exited;
  expect(existsSync(join(cwd, '.data', clusters[0]))).toBe(false);
}, 120_000);

it('a cluster left by a process that no longer runs is removed by the next demo', async () => {
  const cwd = checkout();
  // A pid above Linux's pid_max limit (2^22) never runs.
  const abandoned = join(cwd, '.data', 'demo-postgres-4194305');
  const foreign = join(cwd, '.data', 'demo-postgres-kept');
  for (const folder of [abandoned, foreign]) mkdirSync(folder, { recursive: true });
  const port = await findFreePort();
  const demo = startDemo(cwd, port);
  await printedKey(demo);
  expect(existsSync(abandoned)).toBe(false);
  expect(existsSync(foreign)).toBe(true);
}, 120_000);

it('the demo on a DATABASE_URL whose database does not exist: one sentence saying what to do', async () => {
  const url = directDatabaseUrl('visitor_api_demo_missing_test');
  const demo = spawnBuilt('dev/demo.js', { databaseUrl: url, env: { NODE_ENV: 'development' } });
  expect(await demo.exited).toMatchObject({ code: 1 });
  const output = demo.output.join('');
  expect(output).toContain(
    'DATABASE_URL (from the environment) names the database "visitor_api_demo_missing_test", ' +
      'which does not exist on ',
  );
  expect(output).toMatch(/createdb -h \S+ -p \d+ -U \S+ visitor_api_demo_missing_test/);
  expect(output).toContain('or unset DATABASE_URL');
}, 60_000);
