import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import request, { type Response } from 'supertest';
import { generateApiKey } from '../../src/auth/api-key';
import { CompaniesService } from '../../src/companies/companies.service';
import { LeadsService } from '../../src/leads/leads.service';
import { AppLogger } from '../../src/logging/app-logger';
import { LOG_DESTINATION } from '../../src/logging/logging.module';
import { LOG_BUFFER_BYTES } from '../../src/logging/stdout-log';
import { findFreePort } from '../../src/dev/free-port';
import fc from 'fast-check';
import { createTestApp, listening, type TestApp } from '../support/app';
import { type BuiltProcess, spawnBuilt } from '../support/built-process';
import { shippedNodeFlags } from '../support/node-flags';
import { until } from '../support/until';
import { propertyOptions } from '../support/fast-check';
import {
  encode,
  encodings,
  gluedAfter,
  gluedBefore,
  leaksOf,
  wellFormedKeys,
} from '../support/key-encodings';
import { send } from '../support/raw-http';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { createCompany } from '../support/factories';
import { createTenant, getWithKey } from '../support/http';

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
    // The generated requests below are many, from one address, half of them refused.
    env: {
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '1000000',
    },
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
 * The one request line of a response, found by the X-Request-Id the response carries. The request
 * log writes it when the response closes, which may come a turn of the event loop after the client
 * has it.
 */
async function requestLineOf(response: Response): Promise<LogLine> {
  const id = response.headers['x-request-id'];
  const matching = () => lines().filter((line) => line.requestId === id && 'statusCode' in line);
  await until(`the request line of ${id}`, () => matching().length > 0, { everyMs: 1 });
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
 * Keys sent where a client can put them (a query value or name, a path segment, X-Request-Id),
 * glued to other text and percent-encoded in part or whole, once or several times: no reading of
 * any log line, error body or response header holds the key (docs/security.md).
 */
describe('key-shaped values in any encoding', () => {
  /** Where the text goes; `/v1/me?x=<text>` and the like. */
  const placements = {
    'a query value': (text: string) => `/v1/companies?api_key=${text}&limit=1`,
    'a query name': (text: string) => `/v1/leads?${text}=1`,
    since: (text: string) => `/v1/companies?since=${text}`,
    'a path segment': (text: string) => `/v1/companies/${text}`,
    'an unknown path': (text: string) => `/v1/${text}/x?y=1`,
    'a request id': () => '/v1/me?z=1',
  };
  type Placement = keyof typeof placements;

  /** A request line's path: anything outside printable ASCII (and `#`) percent-encoded. */
  const onTheWire = (path: string) =>
    path.replace(/[^\x21-\x7e]|#/gu, (char) =>
      [...Buffer.from(char, 'utf8')]
        .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
        .join(''),
    );

  it('never reach the output, an error body or a header (generated)', async () => {
    const port = Number(new URL(await listening(t)).port);
    const sentKeys: string[] = [];
    const responses: { status: number; text: string; headers: string; requestId: string }[] = [];
    const start = output.length;

    await fc.assert(
      fc.asyncProperty(
        fc.oneof(wellFormedKeys, fc.constant(key)),
        gluedBefore,
        gluedAfter,
        encodings,
        fc.constantFrom(...(Object.keys(placements) as Placement[])),
        fc.boolean(),
        async (generated, before, after, encoding, placement, authenticated) => {
          sentKeys.push(generated);
          const headers: Record<string, string> = {};
          if (authenticated) headers.Authorization = `Bearer ${key}`;
          let path: string;
          if (placement === 'a request id') {
            // What a sane X-Request-Id may hold (letters, digits, `.`, `_`, `:`, `-`).
            const glue = (text: string) => text.replace(/[^A-Za-z0-9._:-]/g, '');
            headers['X-Request-Id'] = `${glue(before)}${generated}${glue(after)}`;
            path = placements[placement]();
          } else {
            path = onTheWire(
              placements[placement](encode(`${before}${generated}${after}`, encoding)),
            );
          }

          const response = await send(port, path, { headers });

          expect([400, 401, 404]).toContain(response.status);
          const echoed = { text: response.text, headers: JSON.stringify(response.headers) };
          const requestId = String(response.headers['x-request-id']);
          responses.push({ status: response.status, ...echoed, requestId });
          expect(leaksOf(echoed.text, generated)).toEqual([]);
          expect(leaksOf(echoed.headers, generated)).toEqual([]);
        },
      ),
      propertyOptions(150),
    );

    // Every request's line is written (on 'finish', possibly a turn after the client has it), but
    // for the paths the router refuses to decode (`Bad Request`), which it answers before the
    // request log runs.
    const ids = (lines: string[]) =>
      new Set(lines.map((line) => (JSON.parse(line) as { requestId?: string }).requestId));
    const logged = responses.filter(({ text }) => !text.includes('"message":"Bad Request"'));
    const missing = () => {
      const seen = ids(output.slice(start));
      return logged.filter(({ requestId }) => !seen.has(requestId));
    };
    await until('every request line', () => missing().length === 0, {
      detail: () => JSON.stringify(missing().map(({ requestId }) => requestId)),
    });
    expect(missing()).toEqual([]);
    expect(logged.length).toBeGreaterThan(responses.length / 2);
    const written = output.slice(start);
    for (const generated of sentKeys) {
      for (const line of written) expect(leaksOf(line, generated)).toEqual([]);
    }
    // The marker shows that the keys were there and replaced, in the log and in the bodies.
    expect(written.join('')).toContain('st_[REDACTED]');
    expect(responses.some(({ text }) => text.includes('st_[REDACTED]'))).toBe(true);
  });

  it.each([
    ['s%74_', (k: string) => `/v1/companies?api_key=s%74_${k.slice(3)}`],
    ['%73t_', (k: string) => `/v1/companies?api_key=%73t_${k.slice(3)}`],
    ['every byte encoded', (k: string) => `/v1/companies?api_key=${encodeEvery(k)}`],
    ['token=Bearer_', (k: string) => `/v1/companies?token=Bearer_${k}`],
    ['a key as a parameter name', (k: string) => `/v1/companies?${k}=1`],
  ])('the envelope says where the key was: %s', async (_case, pathOf) => {
    const path = pathOf(key);
    const response = await getWithKey(t.app, path, key);

    expect(response.status).toBe(400);
    expect(response.body.path).toContain('st_[REDACTED]');
    expect(leaksOf(JSON.stringify(response.body), key)).toEqual([]);
    // The rest of the path is as received.
    expect(response.body.path).toMatch(/^\/v1\/companies\?/);
  });

  it.each([['req_'], ['trace1'], ['a.b:']])(
    'a key-shaped X-Request-Id (%s...) is replaced by a generated one',
    async (prefix) => {
      const response = await getWithKey(t.app, '/v1/me', key).set(
        'X-Request-Id',
        `${prefix}${key}`,
      );

      expect(response.status).toBe(200);
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const line = await requestLineOf(response);
      expect(leaksOf(JSON.stringify(line), key)).toEqual([]);
    },
  );
});

function encodeEvery(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('');
}

/*
 * The built server (`node dist/main.js`, as production runs it; `npm test` builds it first) when
 * its start fails: every line it prints is JSON, the first one included (not Nest's coloured
 * banner or a stack), and the last, at `fatal`, says what to do.
 */
describe('a start that fails', () => {
  const DIST = join(__dirname, '../..', 'dist');
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
        // The run's pooler setting too: the database URL may lead to PgBouncer.
        env: { PATH: process.env.PATH, DATABASE_POOLER: process.env.DATABASE_POOLER, ...env },
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

/**
 * The built server writes its lines in blocks (src/logging/stdout-log.ts): under load, every
 * request's line still reaches standard output when it stops as it should, and a SIGKILL loses
 * at most the block it held.
 */
describe('the log buffer of the built server', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  /** The built server on a free port, with the node flags it ships with. */
  async function startBuilt(): Promise<{ server: BuiltProcess; port: number }> {
    const port = await findFreePort();
    const server = spawnBuilt('main.js', {
      databaseUrl: database.url,
      env: { PORT: String(port), LOG_LEVEL: 'info' },
      nodeFlags: shippedNodeFlags('server'),
    });
    await until('the built server to answer', () => answers(port), {
      detail: () => server.output.join(''),
    });
    return { server, port };
  }

  const answers = (port: number) =>
    fetch(`http://127.0.0.1:${port}/health/live`).then(
      (response) => response.ok,
      () => false,
    );

  /** Probes from `clients` loops until `stop()`, each with an id of its own: the ids answered. */
  function load(
    port: number,
    clients: number,
  ): { answered: Set<string>; stop: () => Promise<void> } {
    const answered = new Set<string>();
    let running = true;
    const loops = Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; running; n++) {
        const id = `probe-${client}-${n}`;
        const ok = await fetch(`http://127.0.0.1:${port}/health/live`, {
          headers: { 'x-request-id': id },
        }).then(
          async (response) => (await response.arrayBuffer(), response.ok),
          () => false,
        );
        if (ok) answered.add(id);
        else return;
      }
    });
    return {
      answered,
      stop: async () => {
        running = false;
        await Promise.all(loops);
      },
    };
  }

  /** The request ids of the request lines the process wrote. */
  function loggedIds(server: BuiltProcess): Set<string> {
    return new Set(
      server.output
        .join('')
        .split('\n')
        .filter((line) => line.includes('"request completed"'))
        .map((line) => (JSON.parse(line) as LogLine).requestId as string),
    );
  }

  it('SIGTERM under load: every answered request has its line', async () => {
    const { server, port } = await startBuilt();
    const probes = load(port, 20);
    await until('a few hundred answers', () => probes.answered.size >= 300);

    server.process.kill('SIGTERM');
    await probes.stop();
    expect((await server.exited).code).toBe(0);

    const logged = loggedIds(server);
    expect([...probes.answered].filter((id) => !logged.has(id))).toEqual([]);
    // Written just before the process exits: held in the buffer until the exit writes it.
    const last = server.output.join('').trimEnd().split('\n').at(-1) ?? '';
    expect(JSON.parse(last)).toMatchObject({ context: 'Shutdown', msg: 'Shut down' });
  });

  it('SIGKILL under load: at most the held block of lines is lost', async () => {
    const clients = 20;
    const { server, port } = await startBuilt();
    const probes = load(port, clients);
    await until('a few hundred answers', () => probes.answered.size >= 300);

    server.process.kill('SIGKILL');
    await probes.stop();
    await server.exited;

    const logged = loggedIds(server);
    const lost = [...probes.answered].filter((id) => !logged.has(id));
    // A held line is at least as long as the shortest line written: the block's bound in lines.
    // Besides those, each client's last answer may have left before its line was made (the line
    // is written when the response closes, a turn of the event loop after its last byte).
    const written = server.output.join('').split('\n').filter(Boolean);
    const shortest = Math.min(...written.map((line) => Buffer.byteLength(line) + 1));
    expect(lost.length).toBeLessThanOrEqual(Math.ceil(LOG_BUFFER_BYTES / shortest) + clients);
  });
});
