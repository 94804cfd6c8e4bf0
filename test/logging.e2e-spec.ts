import request, { type Response } from 'supertest';
import { generateApiKey } from '../src/auth/api-key';
import { CompaniesService } from '../src/companies/companies.service';
import { LeadsService } from '../src/leads/leads.service';
import { AppLogger } from '../src/logging/app-logger';
import { LOG_DESTINATION } from '../src/logging/logging.module';
import { createTestApp, type TestApp } from './support/app';
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
