import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { findFreePort } from '../../src/dev/free-port';
import { createTestDatabase, databaseUrl, type TestDatabase } from '../support/database';
import { until } from '../support/until';
import { WEBHOOK_ENV } from '../support/webhooks';

/*
 * The npm scripts as a process manager or a newcomer runs them: a signal to npm's PID reaches the
 * node process (npm forwards SIGTERM and SIGINT to its child, which must be node, not a shell that
 * dies and leaves node serving); a second demo on a taken port says so before building anything;
 * `db:migrate` on a database that does not exist says how to create it.
 */
const ROOT = join(__dirname, '../..');
// How long a script may take to come up or to go away (npm, then node, on a busy machine).
const withinMs = 60_000;
const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

interface NpmRun {
  npm: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm run -s <script>` in the checkout, with only these variables (and PATH, HOME). */
function npmRun(script: string, env: Record<string, string>): NpmRun {
  const npm = spawn('npm', ['run', '-s', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  return { npm, output: () => output, exited };
}

/** The processes whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const live = (port: number) =>
  fetch(`http://127.0.0.1:${port}/health/live`).then(
    (response) => response.status === 200,
    () => false,
  );

describe('a signal to the PID of npm', () => {
  it('every script that runs a process execs node, so that npm signals node itself', () => {
    for (const name of ['start:prod', 'start:migrate', 'start:worker', 'demo', 'db:migrate']) {
      expect([name, scripts[name]]).toEqual([name, expect.stringMatching(/(^|&& )exec node /)]);
    }
    expect(scripts.admin).toMatch(/^exec node /);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'npm run start:prod: %s stops the server, which exits 0 and frees its port',
    async (signal) => {
      const port = await findFreePort();
      const run = npmRun('start:prod', {
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        API_KEY_SECRET: process.env.API_KEY_SECRET ?? '',
        PORT: String(port),
        LOG_LEVEL: 'silent',
      });
      await until('the server to answer', () => live(port), { withinMs, detail: run.output });
      const [node] = childrenOf(run.npm.pid ?? 0);
      expect(node).toBeDefined();

      run.npm.kill(signal);
      expect(await run.exited).toBe(0);
      await until('node to exit', () => !isAlive(node), { withinMs });
      expect(await live(port)).toBe(false);
    },
  );

  it('npm run start:worker: SIGTERM drains the worker, which exits 0', async () => {
    const run = npmRun('start:worker', {
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      API_KEY_SECRET: process.env.API_KEY_SECRET ?? '',
      ...WEBHOOK_ENV,
    });
    await until('the worker to start', () => /worker started/i.test(run.output()), {
      withinMs,
      detail: run.output,
    });
    const [node] = childrenOf(run.npm.pid ?? 0);
    expect(node).toBeDefined();

    run.npm.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    await until('node to exit', () => !isAlive(node), { withinMs });
  });
});

describe('npm run demo on a port already taken', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    port = await findFreePort();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(port, resolve));
  });
  afterAll(() => new Promise((resolve) => taken.close(resolve)));

  it('says so and stops before building, migrating or seeding anything', async () => {
    const run = npmRun('demo', { PORT: String(port), NODE_ENV: 'development' });

    expect(await run.exited).toBe(1);
    expect(run.output()).toBe(
      `port ${port} is already in use: set PORT to a free port (e.g. PORT=${port + 1})\n`,
    );
  });
});

it('npm run db:migrate on a database that does not exist: one sentence with the createdb', async () => {
  const url = databaseUrl('no_such_database_here');
  const run = npmRun('db:migrate', { DATABASE_URL: url });

  expect(await run.exited).toBe(1);
  const { hostname, port } = new URL(url);
  expect(run.output()).toBe(
    `DATABASE_URL (from the environment) names the database "no_such_database_here", which does ` +
      `not exist on ${hostname}:${port}: create it (\`createdb -h ${hostname} -p ${port} -U ` +
      `${new URL(url).username || 'postgres'} no_such_database_here\`)\n`,
  );
});
