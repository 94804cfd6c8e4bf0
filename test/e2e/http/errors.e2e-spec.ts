import { createServer, connect, type Server, type Socket } from 'node:net';
import { Client, Pool } from 'pg';
import request from 'supertest';
import { generateApiKey } from '../../../src/auth/api-key';
import { KeyLookups } from '../../../src/auth/key-lookups';
import { CompaniesService } from '../../../src/companies/companies.service';
import { COMPANY_LIST } from '../../../src/companies/companies.sql';
import { LeadsService } from '../../../src/leads/leads.service';
import { createTestApp, type TestApp } from '../../support/app';
import { createTestDatabase, type TestDatabase, waitForLockWaiter } from '../../support/database';
import { createApiKey, createCompany, createWorkspace } from '../../support/factories';
import { Database } from '../../../src/database/database';
import { until } from '../../support/until';

/**
 * A TCP relay between the application and PostgreSQL, that the test takes down and brings back:
 * the database becomes unreachable (and the connections the pool holds die) without touching the
 * server the other test files share.
 */
class DatabaseRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    // Running already (afterAll starts it, whatever state a test left it in).
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    // A port below the kernel's ephemeral range (32768 and up): the relay stops and starts again
    // on the same port, which an outgoing connection of another test (or PgBouncer's) could have
    // taken in between had the port been an ephemeral one.
    const listen = async (port: number) => {
      try {
        await new Promise<void>((resolve, reject) => {
          // Each attempt's listeners go with it: a port still held can take many attempts.
          const listening = () => {
            server.off('error', failed);
            resolve();
          };
          const failed = (error: Error) => {
            server.off('listening', listening);
            reject(error);
          };
          server.once('listening', listening).once('error', failed);
          server.listen(port, '127.0.0.1');
        });
        return port;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        return undefined;
      }
    };
    this.port = await until('a port for the relay', () =>
      listen(this.port || 20_000 + Math.floor(Math.random() * 12_000)),
    );
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const ENVELOPE_KEYS = ['error', 'message', 'path', 'statusCode', 'timestamp'];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectCommonErrorHeaders(response: request.Response): void {
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-request-id']).toEqual(expect.any(String));
  expect(response.headers['x-powered-by']).toBeUndefined();
}

/** What no error body may contain: internals of the failure, the database, or the code. */
function expectNoInternals(response: request.Response, ...secrets: string[]): void {
  for (const secret of [...secrets, 'stack', '    at ', '.ts:', '.js:', 'prisma', 'Prisma']) {
    expect(response.text).not.toContain(secret);
  }
}

let t: TestApp;
let database: TestDatabase;
let relay: DatabaseRelay;
let key: string;

beforeAll(async () => {
  // The application reaches its database through the relay, so that the test can cut it off.
  database = await createTestDatabase();
  const direct = new URL(database.url);
  relay = new DatabaseRelay({ host: direct.hostname, port: Number(direct.port) });
  await relay.start();
  const relayed = new URL(database.url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(relay.port);
  t = await createTestApp({ env: { DATABASE_URL: relayed.toString() } });

  const workspace = await createWorkspace(t.prisma);
  ({ key } = await createApiKey(t.prisma, workspace.id));
  await createCompany(t.prisma, workspace.id);
});

afterAll(async () => {
  await relay.start().catch(() => undefined);
  await t.close();
  await relay.stop();
  await database.drop();
});

afterEach(() => {
  jest.restoreAllMocks();
});

const get = (path: string) =>
  request(t.app.getHttpServer()).get(path).set('Authorization', `Bearer ${key}`);

describe('404', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/v1'],
    ['GET', '/v1/unknown'],
    ['GET', '/v1/companies/co_000001/contacts'],
    ['GET', '/v1/me/extra'],
    ['GET', '/v2/companies'],
    ['GET', '/v1/unknown?limit=0&x=%20y'],
    ['POST', '/v1/companies'],
    ['PUT', '/v1/me'],
    ['DELETE', '/v1/leads'],
    ['PATCH', '/v1/companies'],
  ])('%s %s: the envelope with NOT_FOUND, with or without a key', async (method, path) => {
    for (const authorization of [`Bearer ${key}`, undefined]) {
      let call = request(t.app.getHttpServer())[method.toLowerCase() as 'get'](path);
      if (authorization) call = call.set('Authorization', authorization);
      const response = await call;

      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        statusCode: 404,
        // The root says where the API and its reference are; any other path the fixed text.
        message:
          path === '/'
            ? 'Not Found: the API is under /v1; its reference is at /docs and its OpenAPI document at /v1/openapi.json'
            : 'Not Found',
        error: 'NOT_FOUND',
        path,
        timestamp: expect.stringMatching(ISO_UTC),
      });
      expectCommonErrorHeaders(response);
      // The message is fixed: it does not echo the method or the path the caller sent.
      expect(response.text).not.toContain('Cannot');
    }
  });
});

describe('500', () => {
  const expected500 = (path: string) => ({
    statusCode: 500,
    message: 'Internal server error',
    error: 'INTERNAL_SERVER_ERROR',
    path,
    timestamp: expect.stringMatching(ISO_UTC),
  });

  it('an unexpected error in a service is a bare 500, with no detail of it', async () => {
    const failure = new Error('secret SQL detail: SELECT * FROM companies');
    jest.spyOn(t.app.get(CompaniesService), 'list').mockRejectedValueOnce(failure);

    const response = await get('/v1/companies?limit=5');

    expect(response.status).toBe(500);
    expect(response.body).toEqual(expected500('/v1/companies?limit=5'));
    expect(Object.keys(response.body).sort()).toEqual(ENVELOPE_KEYS);
    expectCommonErrorHeaders(response);
    expectNoInternals(response, 'secret', 'SQL', 'SELECT', 'companies.service');
  });

  it.each([
    ['thrown synchronously', () => new Error('secret SQL detail')],
    ['a TypeError', () => new TypeError("Cannot read properties of undefined (reading 'secret')")],
    ['not an Error', () => ({ message: 'secret SQL detail', stack: 'secret stack' })],
    ['a string', () => 'secret SQL detail'],
    ['shaped like an HTTP error', () => ({ status: 418, statusCode: 418, message: 'secret' })],
    [
      'a database error that is not about availability',
      () => Object.assign(new Error('secret SQL detail'), { code: 'P2002' }),
    ],
  ])('an unexpected failure %s is a bare 500', async (_case, makeFailure) => {
    jest.spyOn(t.app.get(LeadsService), 'list').mockImplementationOnce(() => {
      // Code may throw anything; the filter must cope with values that are not Errors.
      // eslint-disable-next-line @typescript-eslint/only-throw-error
      throw makeFailure();
    });

    const response = await get('/v1/leads');

    expect(response.status).toBe(500);
    expect(response.body).toEqual(expected500('/v1/leads'));
    expectNoInternals(response, 'secret', 'SQL', 'Cannot read');
  });

  it('an unexpected error in the key check is a bare 500 too', async () => {
    jest.spyOn(t.app.get(KeyLookups), 'find').mockRejectedValueOnce(new Error('secret SQL detail'));

    const response = await get('/v1/me');

    expect(response.status).toBe(500);
    expect(response.body).toEqual(expected500('/v1/me'));
    expect(response.headers['www-authenticate']).toBeUndefined();
    expectNoInternals(response, 'secret', 'SQL');
  });

  it('the application keeps serving after a 500', async () => {
    jest
      .spyOn(t.app.get(CompaniesService), 'list')
      .mockRejectedValueOnce(new Error('secret SQL detail'));
    expect((await get('/v1/companies')).status).toBe(500);
    const response = await get('/v1/companies');
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(1);
  });
});

describe('503', () => {
  const expected503 = (path: string) => ({
    statusCode: 503,
    message: 'Service temporarily unavailable',
    error: 'SERVICE_UNAVAILABLE',
    path,
    timestamp: expect.stringMatching(ISO_UTC),
  });

  it('the database unreachable: 503 on every endpoint, then it recovers by itself', async () => {
    expect((await get('/v1/companies')).status).toBe(200);

    await relay.stop();
    try {
      for (const path of ['/v1/me', '/v1/companies?limit=2', '/v1/leads']) {
        const response = await get(path);
        expect(response.status).toBe(503);
        expect(response.body).toEqual(expected503(path));
        expect(Object.keys(response.body).sort()).toEqual(ENVELOPE_KEYS);
        expectCommonErrorHeaders(response);
        expectNoInternals(response, '127.0.0.1', String(relay.port), 'ECONNREFUSED', 'reach');
      }
      // A well-formed key that does not exist cannot be told from a valid one without the
      // database: 503 too, not 401.
      expect(
        (
          await request(t.app.getHttpServer())
            .get('/v1/me')
            .set('Authorization', `Bearer ${generateApiKey()}`)
        ).status,
      ).toBe(503);
      // A malformed key needs no database: still the 401.
      const malformed = await request(t.app.getHttpServer())
        .get('/v1/me')
        .set('Authorization', 'Bearer st_not-a-key');
      expect(malformed.status).toBe(401);
    } finally {
      await relay.start();
    }

    const response = await get('/v1/companies');
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(1);
  });

  it('connections dying while idle in the pool give no 500, and the next request is served', async () => {
    // Warm the pool, then cut every connection it holds while the server stays reachable.
    expect((await get('/v1/companies')).status).toBe(200);
    await relay.stop();
    await relay.start();

    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('/v1/companies')).status);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    expect(statuses.at(-1)).toBe(200);
  });

  it('an administrator terminating the idle connections neither ends the process nor fails the next request', async () => {
    expect((await get('/v1/companies')).status).toBe(200);
    // Directly on the server: the service's connections, or PgBouncer's on its behalf.
    const admin = new Client({ connectionString: database.directUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity, pg_terminate_backend(pid)
         WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(rows.length).toBeGreaterThan(0);
      // Until those backends are gone (pg_terminate_backend only signals them), so that their
      // FATAL messages have reached the pool's idle connections before the next requests: a
      // fixed wait could end first on a loaded machine and hand three dead connections out.
      const pids = rows.map((row) => row.pid);
      await until('the terminated backends to exit', async () => {
        const left = await admin.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)',
          [pids],
        );
        return left.rows[0].n === 0;
      });
    } finally {
      await admin.end();
    }

    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('/v1/companies')).status);
    expect(statuses.every((status) => status === 200 || status === 503)).toBe(true);
    expect(statuses.at(-1)).toBe(200);
  });

  it.each([
    ['the key lookup', 'api_keys', '/v1/me'],
    ['a list', 'companies', '/v1/companies'],
  ])('the connection lost in the middle of %s gives 503', async (_case, table, path) => {
    const locker = new Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const pending = get(path).then((response) => response);
      await waitForLockWaiter(locker);
      await relay.stop();
      const response = await pending;
      expect(response.status).toBe(503);
      expect(response.body).toEqual(expected503(path));
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await relay.start();
    }
    expect((await get('/v1/companies')).status).toBe(200);
  });

  it('a query that times out (statement_timeout) gives 503', async () => {
    // The real error of a statement cancelled by statement_timeout, as the service's pool gets it:
    // obtained from a pool with a 20 ms timeout on a locked table, so that the test need not wait
    // for the application's own 5 s timeout.
    const timedOut = await captureStatementTimeout(database.directUrl);
    const { reads } = t.app.get(Database);
    const query = reads.query.bind(reads);
    jest.spyOn(reads, 'query').mockImplementation((sql, values) =>
      // The list's statement as the service runs it: sized (items/body-budget.ts).
      sql === COMPANY_LIST.text([]).sized ? Promise.reject(timedOut) : query(sql, values),
    );

    const response = await get('/v1/companies');

    expect(response.status).toBe(503);
    expect(response.body).toEqual(expected503('/v1/companies'));
    expectNoInternals(response, '57014', 'statement', 'canceling');
  });

  it('the key lookup timing out gives 503, not 401', async () => {
    const timedOut = await captureStatementTimeout(database.directUrl);
    jest.spyOn(t.app.get(KeyLookups), 'find').mockRejectedValueOnce(timedOut);

    const response = await get('/v1/me');

    expect(response.status).toBe(503);
    expect(response.body).toEqual(expected503('/v1/me'));
  });
});

async function captureStatementTimeout(url: string): Promise<Error> {
  const locker = new Client({ connectionString: url });
  const pool = new Pool({ connectionString: url, statement_timeout: 20 });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
    const error: unknown = await pool.query('SELECT count(*) FROM companies').then(
      () => new Error('the query was not cancelled'),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toContain('canceling statement due to statement timeout');
    return error as Error;
  } finally {
    await locker.query('ROLLBACK');
    await locker.end();
    await pool.end();
  }
}
