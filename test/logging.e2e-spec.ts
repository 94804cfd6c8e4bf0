import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import request, { type Response } from 'supertest';
import { generateApiKey } from '../src/auth/api-key';
import { CompaniesService } from '../src/companies/companies.service';
import { LeadsService } from '../src/leads/leads.service';
import { AppLogger } from '../src/logging/app-logger';
import { LOG_DESTINATION } from '../src/logging/logging.module';
import { findFreePort } from '../src/dev/free-port';
import { createTestApp, type TestApp } from './support/app';
import { createTestDatabase, type TestDatabase } from './support/database';
import { createCompany } from './support/factories';
import { createTenant, getWithKey } from './support/http';

/** Every line the application writes, exactly as its standard output would receive them. */
const output: string[] = [];
const capture = { write: (line: string) => void output.push(line) };

type LogLine = Record<string, unknown>;
const lines = (): LogLine[] => output.map((line) => JSON.parse(line) as LogLine);

let t: TestApp;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  t = await createTestApp({
    env: { LOG_LEVEL: 'info' },
    customize: (builder) => {
      builder.overrideProvider(LOG_DESTINATION).useValue(capture);
    },
  });
  // As main.ts does: Nest's own messages go through pino too.
  t.app.useLogger(t.app.get(AppLogger));
  const tenant = await createTenant(t.prisma);
  ({ key } = tenant);
  workspaceId = tenant.workspace.id;
  await createCompany(t.prisma, workspaceId);
});

afterAll(async () => {
  await t?.close();
});

afterEach(() => {
  jest.restoreAllMocks();
});

/**
 * The one request line of a response, found by the X-Request-Id the response carries. pino-http
 * writes it when the response finishes, which may come a turn of the event loop after the client
 * has it: a bounded number of turns.
 */
async function requestLineOf(response: Response): Promise<LogLine> {
  const id = response.headers['x-request-id'];
  const matching = () => lines().filter((line) => line.requestId === id && 'statusCode' in line);
  for (let turn = 0; turn < 100 && matching().length === 0; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(matching()).toHaveLength(1);
  return matching()[0];
}

describe('the request line', () => {
  it('one JSON line per request: method, path, status, duration, request id, workspace', async () => {
    const response = await getWithKey(t.app, '/v1/companies?limit=1', key).set(
      'X-Request-Id',
      'logging-test-1',
    );
    expect(response.status).toBe(200);

    expect(await requestLineOf(response)).toEqual({
      level: 'info',
      time: expect.any(String),
      pid: process.pid,
      hostname: expect.any(String),
      requestId: 'logging-test-1',
      method: 'GET',
      path: '/v1/companies?limit=1',
      statusCode: 200,
      durationMs: expect.any(Number),
      workspaceId,
      msg: 'request completed',
    });
  });

  it('carries the X-Request-Id of the response when the server generated it', async () => {
    const response = await getWithKey(t.app, '/v1/me', key);
    expect(response.status).toBe(200);
    const id = response.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    expect(await requestLineOf(response)).toMatchObject({ requestId: id, path: '/v1/me' });
  });

  it('has no workspace when the key was refused, and still one line', async () => {
    const response = await getWithKey(t.app, '/v1/leads', generateApiKey());
    expect(response.status).toBe(401);

    const line = await requestLineOf(response);
    expect(line).toMatchObject({ level: 'info', statusCode: 401, path: '/v1/leads' });
    expect(line).not.toHaveProperty('workspaceId');
  });

  it('logs unknown paths too', async () => {
    const response = await request(t.app.getHttpServer()).get('/nowhere?x=1');
    expect(response.status).toBe(404);

    expect(await requestLineOf(response)).toMatchObject({ statusCode: 404, path: '/nowhere?x=1' });
  });
});

describe('errors', () => {
  it("a 500 is an error line, and the filter's line carries the same request id", async () => {
    jest.spyOn(t.app.get(CompaniesService), 'list').mockRejectedValueOnce(new Error('boom'));

    const response = await getWithKey(t.app, '/v1/companies', key);
    expect(response.status).toBe(500);

    const line = await requestLineOf(response);
    expect(line).toMatchObject({ level: 'error', statusCode: 500, workspaceId });
    expect(line).not.toHaveProperty('err');
    const filterLines = lines().filter(
      (entry) => entry.requestId === line.requestId && entry.context === 'AllExceptionsFilter',
    );
    expect(filterLines).toHaveLength(1);
    expect(filterLines[0]).toMatchObject({ level: 'error' });
    expect(JSON.stringify(filterLines[0])).toContain('boom');
  });
});

describe('secrets', () => {
  it('no key and no Authorization value anywhere in the output', async () => {
    const unknownKey = generateApiKey();
    const basicSecret = 'dXNlcjpzM2NyM3QtcGFzc3dvcmQ=';
    const mistyped = `${key.slice(0, -1)}-`;
    const sent: [string, Response][] = [];
    const send = async (path: string, authorization?: string) => {
      let call = request(t.app.getHttpServer()).get(path);
      if (authorization) call = call.set('Authorization', authorization);
      sent.push([path, await call]);
    };

    // In the header: valid, unknown, malformed, another scheme.
    await send('/v1/me', `Bearer ${key}`);
    await send('/v1/me', `Bearer ${unknownKey}`);
    await send('/v1/me', `Bearer ${mistyped}`);
    await send('/v1/me', `Basic ${basicSecret}`);
    // In the query string and the path, plain and percent-encoded.
    await send(`/v1/leads?api_key=${key}`, `Bearer ${key}`);
    await send(`/v1/companies?token=${unknownKey}&limit=1`);
    await send(`/v1/companies?q=Bearer%20${mistyped}`);
    await send(`/v1/${key}`);
    await send(`/v1/companies?key=st%5F${key.slice(3)}`);
    // In an error's message and stack, as the filter logs it.
    jest
      .spyOn(t.app.get(LeadsService), 'list')
      .mockRejectedValueOnce(new Error(`lookup failed for ${key}`));
    await send('/v1/leads', `Bearer ${key}`);

    expect(sent.map(([, response]) => response.status)).toEqual([
      200, 401, 401, 401, 400, 401, 401, 404, 401, 500,
    ]);
    // The query-string case: the line has the path with the key replaced.
    expect(await requestLineOf(sent[4][1])).toMatchObject({
      path: '/v1/leads?api_key=st_[REDACTED]',
      statusCode: 400,
      workspaceId,
    });
    for (const [, response] of sent) await requestLineOf(response);

    const everything = output.join('');
    expect(everything).toContain('st_[REDACTED]');
    for (const secret of [key, key.slice(3), unknownKey, mistyped, basicSecret]) {
      expect(everything).not.toContain(secret);
    }
    // And nothing but JSON lines.
    for (const line of output) expect(line).toMatch(/^\{.*\}\n$/);
    expect(() => lines()).not.toThrow();
  });
});

/*
 * The built server (`node dist/main.js`, as production runs it; `npm test` builds it first) when
 * its start fails: every line it prints is JSON, the first one included (not Nest's coloured
 * banner or a stack), and the last, at `fatal`, says what to do.
 */
describe('a start that fails', () => {
  const DIST = join(__dirname, '..', 'dist');
  const SECRET = process.env.API_KEY_SECRET;
  const databases: TestDatabase[] = [];
  const held: Server[] = [];

  afterAll(async () => {
    for (const server of held) await new Promise((resolve) => server.close(resolve));
    for (const database of databases) await database.drop();
  });

  interface Exit {
    status: number | null;
    stdout: string;
    stderr: string;
  }

  /** A built entry point with an environment of its own only (no .env in a temporary folder). */
  function runToExit(file: string, env: Record<string, string | undefined>): Promise<Exit> {
    const path = join(DIST, file);
    if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first.`);
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path], {
        cwd: tmpdir(),
        env: { PATH: process.env.PATH, ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`${file} did not stop:\n${stdout}${stderr}`));
      }, 25_000);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  /** Exit status 1, and every line parsed as JSON, the first above all; the last one returned. */
  function fatalLine(exit: Exit): LogLine {
    expect(exit.status).toBe(1);
    expect(exit.stderr).toBe('');
    const printed = exit.stdout.trimEnd().split('\n');
    expect(printed[0]).toMatch(/^\{"level":"\w+"/);
    const parsed = printed.map((line) => JSON.parse(line) as LogLine);
    // No colour codes, and Nest's ExceptionHandler does not repeat the error with its stack.
    expect(exit.stdout).not.toContain('\u001b[');
    expect(parsed.filter((line) => line.context === 'ExceptionHandler')).toEqual([]);
    const last = parsed[parsed.length - 1];
    expect(parsed.filter((line) => line.level === 'fatal')).toEqual([last]);
    return last;
  }

  async function migratedDatabase(): Promise<string> {
    const database = await createTestDatabase();
    databases.push(database);
    return database.url;
  }

  /** A port that something else listens on, on every address as the server would. */
  async function portInUse(): Promise<number> {
    const port = await findFreePort();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, resolve));
    held.push(server);
    return port;
  }

  it('a bad environment: JSON from the first line, then one fatal line naming each variable', async () => {
    const exit = await runToExit('main.js', { LOG_LEVEL: 'info' });

    expect(fatalLine(exit)).toEqual({
      level: 'fatal',
      time: expect.any(String),
      pid: expect.any(Number),
      hostname: expect.any(String),
      msg:
        'Invalid configuration: DATABASE_URL is required (the postgresql:// URL of the database); ' +
        'API_KEY_SECRET is required (a secret of at least 32 characters)',
    });
  });

  it('LOG_LEVEL=silent keeps the fatal line, alone', async () => {
    const exit = await runToExit('main.js', { LOG_LEVEL: 'silent', API_KEY_SECRET: SECRET });

    expect(fatalLine(exit).msg).toMatch(/^Invalid configuration: DATABASE_URL is required/);
    expect(exit.stdout.trimEnd().split('\n')).toHaveLength(1);
  });

  it('a database without the tables: says to run npm run db:migrate', async () => {
    const database = await createTestDatabase({ migrated: false });
    databases.push(database);

    const exit = await runToExit('main.js', {
      LOG_LEVEL: 'info',
      DATABASE_URL: database.url,
      API_KEY_SECRET: SECRET,
      PORT: String(await findFreePort()),
    });

    expect(fatalLine(exit).msg).toBe(
      'the database of DATABASE_URL is not migrated: run `npm run db:migrate` (after `npm run build`), then try again',
    );
  });

  it('a database behind the migrations: names the tables missing', async () => {
    const url = await migratedDatabase();
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query('DROP TABLE change_horizons');
    await client.end();

    const exit = await runToExit('main.js', {
      LOG_LEVEL: 'info',
      DATABASE_URL: url,
      API_KEY_SECRET: SECRET,
      PORT: String(await findFreePort()),
    });

    expect(fatalLine(exit).msg).toBe(
      'the database of DATABASE_URL is not migrated (tables missing: change_horizons): ' +
        'run `npm run db:migrate` (after `npm run build`), then try again',
    );
  });

  it('a port in use: says to set PORT', async () => {
    const port = await portInUse();

    const exit = await runToExit('main.js', {
      LOG_LEVEL: 'info',
      DATABASE_URL: await migratedDatabase(),
      API_KEY_SECRET: SECRET,
      PORT: String(port),
    });

    expect(fatalLine(exit).msg).toBe(
      `port ${port} is already in use: set PORT to a free port (e.g. PORT=${port + 1})`,
    );
  });

  it('the quick start (npm run demo) on a port in use: says to set PORT too', async () => {
    const port = await portInUse();

    const exit = await runToExit(join('dev', 'demo.js'), {
      LOG_LEVEL: 'silent',
      DATABASE_URL: await migratedDatabase(),
      PORT: String(port),
    });

    expect(exit.status).toBe(1);
    expect(exit.stderr).toBe(
      `port ${port} is already in use: set PORT to a free port (e.g. PORT=${port + 1})\n`,
    );
  });
});
