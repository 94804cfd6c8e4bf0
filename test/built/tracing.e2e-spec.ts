import { PrismaPg } from '@prisma/adapter-pg';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { findFreePort } from '../../src/dev/free-port';
import { PrismaClient } from '../../src/generated/prisma/client';
import { METRIC_PREFIX } from '../../src/metrics/process-metrics';
import { runAdminCommand } from '../support/admin';
import { type BuiltProcess, spawnBuilt } from '../support/built-process';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { createCompany, insertCompanies } from '../support/factories';
import { createTenant } from '../support/http';
import { decodeTraceExport, type ExportedSpan as Span } from '../support/otlp-protobuf';
import { sampleValue } from '../support/prometheus-text';
import { until } from '../support/until';
import { Receiver, WEBHOOK_ENV } from '../support/webhooks';

/*
 * Traces (docs/operations.md, "Traces"): the built server and worker with OpenTelemetry's
 * standard variables, exporting to an OTLP/HTTP receiver of this test (protobuf, the one
 * protocol the service sends). A request's spans arrive in one trace that
 * continues the caller's `traceparent`, each with its parent in the trace; its log line carries
 * the trace id; a delivery attempt is a trace of the worker's. Without an endpoint, nothing is
 * sent, not even to the default one (127.0.0.1:4318).
 */
jest.setTimeout(120_000);

const SERVER_KIND = 2;
const CLIENT_KIND = 3;

/** An OTLP/HTTP receiver: POST /v1/traces with protobuf bodies; every span it was sent. */
class OtlpReceiver {
  readonly spans: Span[] = [];
  requests = 0;
  private server?: Server;

  async start(port = 0): Promise<number> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.requests++;
        if (
          request.url === '/v1/traces' &&
          request.headers['content-type'] === 'application/x-protobuf'
        ) {
          this.spans.push(...decodeTraceExport(Buffer.concat(chunks)));
        }
        response.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, '127.0.0.1', resolve);
    });
    return (this.server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  trace(traceId: string): Span[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }
}

const attribute = (span: Span, key: string) => span.attributes?.find((a) => a.key === key)?.value;
const text = (span: Span, key: string) => {
  const value = attribute(span, key);
  return value && 'stringValue' in value ? value.stringValue : undefined;
};

let database: TestDatabase;
let prisma: PrismaClient;
const processes: BuiltProcess[] = [];
const receivers: { stop: () => Promise<void> }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) });
});
afterAll(async () => {
  for (const { process } of processes) if (process.exitCode === null) process.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.stop()));
  await prisma?.$disconnect();
  await database?.drop();
});

async function startServer(
  env: Record<string, string>,
): Promise<{ port: number; server: BuiltProcess }> {
  const port = await findFreePort();
  const server = spawnBuilt('main.js', {
    databaseUrl: database.url,
    env: { PORT: String(port), LOG_LEVEL: 'info', ...env },
  });
  processes.push(server);
  await until('the server to answer', async () => {
    if (server.process.exitCode !== null) throw new Error(server.output.join(''));
    return fetch(`http://127.0.0.1:${port}/health/live`).then(
      (response) => response.ok,
      () => false,
    );
  });
  return { port, server };
}

/** The request lines the server wrote, by request id. */
function requestLines(
  server: BuiltProcess,
): { requestId: string; path: string; traceId?: string }[] {
  return server.output
    .join('')
    .split('\n')
    .filter((line) => line.includes('"request completed"'))
    .map((line) => JSON.parse(line) as { requestId: string; path: string; traceId?: string });
}

const otlpEnv = (port: number) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
  // Spans are batched: a short delay, so that the test does not wait 5 s for each batch.
  OTEL_BSP_SCHEDULE_DELAY: '50',
});

it("continues the caller's trace: each span of the request arrives with its parent in the trace", async () => {
  const receiver = new OtlpReceiver();
  receivers.push(receiver);
  const { port, server } = await startServer(otlpEnv(await receiver.start()));
  const { workspace, key } = await createTenant(prisma);
  await insertCompanies(prisma, workspace.id, 3);

  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  const response = await fetch(`http://127.0.0.1:${port}/v1/companies?limit=2`, {
    headers: { Authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${callerSpanId}-01` },
  });
  expect(response.status).toBe(200);
  const requestId = response.headers.get('x-request-id');

  // The request's server span, and the key's lookup and the page's statements.
  await until('the spans of the request', () => {
    const spans = receiver.trace(traceId);
    return (
      spans.some((span) => span.kind === SERVER_KIND) &&
      spans.filter((span) => span.kind === CLIENT_KIND).length >= 2
    );
  });
  await sleep(300);
  const spans = receiver.trace(traceId);
  const [serverSpan, ...others] = spans.filter((span) => span.kind === SERVER_KIND);
  expect(others).toEqual([]);
  expect(serverSpan).toMatchObject({
    parentSpanId: callerSpanId,
    scope: 'visitor-read-api',
    service: 'visitor-read-api',
  });
  expect(serverSpan.name).toBe('GET /v1/companies');
  expect(attribute(serverSpan, 'http.route')).toEqual({ stringValue: '/v1/companies' });
  expect(attribute(serverSpan, 'http.response.status_code')).toEqual({ intValue: '200' });
  expect(attribute(serverSpan, 'url.path')).toEqual({ stringValue: '/v1/companies' });
  expect(attribute(serverSpan, 'url.query')).toEqual({ stringValue: 'limit=2' });
  expect(attribute(serverSpan, 'client.address')).toEqual({
    stringValue: expect.stringMatching(/(^|:)127\.0\.0\.1$/),
  });
  // Nothing else: the server span and the statements' (no span per Express layer, no wait for a
  // seat that was free), all the service's own.
  expect(new Set(spans.map((span) => span.scope))).toEqual(new Set(['visitor-read-api']));
  expect(spans.filter((span) => span.name === 'fair queue wait')).toEqual([]);
  const statements = spans.filter((span) => span !== serverSpan);
  const databaseName = new URL(database.url).pathname.slice(1);
  for (const statement of statements) {
    expect(statement.kind).toBe(CLIENT_KIND);
    expect(statement.name).toMatch(new RegExp(`^pg\\.query:(SELECT|WITH|UPDATE) ${databaseName}$`));
    expect(attribute(statement, 'db.system.name')).toEqual({ stringValue: 'postgresql' });
    expect(attribute(statement, 'db.namespace')).toEqual({ stringValue: databaseName });
    expect(attribute(statement, 'server.address')).toEqual({ stringValue: '127.0.0.1' });
    expect(attribute(statement, 'server.port')).toEqual({ intValue: expect.any(String) });
    // The text with its placeholders; the values (the key's hash, the workspace) never.
    const sql = text(statement, 'db.query.text') ?? '';
    expect(sql).toMatch(/\$1/);
    expect(sql).not.toContain(workspace.id);
  }
  // The key's lookup, the page (its sized statement: items/body-budget.ts), and the key's first
  // use recorded (auth/api-keys.sql.ts).
  const texts = statements.map((span) => text(span, 'db.query.text') ?? '');
  expect(texts.filter((sql) => sql.startsWith('SELECT') && sql.includes('api_keys'))).toHaveLength(
    1,
  );
  expect(texts.filter((sql) => sql.startsWith('WITH sized'))).toHaveLength(1);
  expect(texts.length).toBeLessThanOrEqual(3);
  // A tree under the caller's span: every span's parent is in the trace, or is the caller's.
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    expect([span.name, ids.has(span.parentSpanId) || span.parentSpanId === callerSpanId]).toEqual([
      span.name,
      true,
    ]);
  }
  // The log line of the request names its trace.
  await until('the request line', () =>
    requestLines(server).some((line) => line.requestId === requestId),
  );
  expect(requestLines(server).find((line) => line.requestId === requestId)).toMatchObject({
    traceId,
  });

  // A request without `traceparent` starts a trace of its own; the probes are not traced.
  const own = await fetch(`http://127.0.0.1:${port}/v1/me`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  expect(own.status).toBe(200);
  await until('the trace of the second request', () =>
    receiver.spans.some((span) => span.kind === SERVER_KIND && span.traceId !== traceId),
  );
  const second = receiver.spans.find(
    (span) => span.kind === SERVER_KIND && span.traceId !== traceId,
  )!;
  expect(second.parentSpanId).toBe('');
  expect(second.name).toBe('GET /v1/me');
  expect(receiver.spans.filter((span) => /health|metrics/.test(span.name))).toEqual([]);

  server.process.kill('SIGTERM');
  expect(await server.exited).toMatchObject({ code: 0 });
});

it("traces a statement's wait for its turn at a connection, when it waited", async () => {
  const receiver = new OtlpReceiver();
  receivers.push(receiver);
  const metricsPort = await findFreePort();
  const { port } = await startServer({
    ...otlpEnv(await receiver.start()),
    METRICS_PORT: String(metricsPort),
  });
  const { workspace, key } = await createTenant(prisma);
  await insertCompanies(prisma, workspace.id, 3);

  // The workspace's share of the connections (3 of 10: database.ts) taken by pages whose statements
  // wait for this lock, so that the other pages wait for a seat until it is released, however fast
  // or slow the machine is that day.
  const locker = new Client({ connectionString: database.directUrl });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
  const traceIds = Array.from({ length: 6 }, () => randomBytes(16).toString('hex'));
  const answers = Promise.all(
    traceIds.map((traceId) =>
      fetch(`http://127.0.0.1:${port}/v1/companies?limit=3`, {
        headers: {
          Authorization: `Bearer ${key}`,
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
        },
      }),
    ),
  );
  try {
    await until('three pages waiting in the fair queue', async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return sampleValue(text, `${METRIC_PREFIX}db_pool_queue_waiting`) === 3;
    });
  } finally {
    await locker.query('COMMIT');
    await locker.end();
  }
  expect((await answers).map((answer) => answer.status)).toEqual(traceIds.map(() => 200));

  const waits = () => receiver.spans.filter((span) => span.name === 'fair queue wait');
  // Each waiting page's wait, with its server span and its statement's span exported beside it.
  const complete = (wait: Span) => {
    const trace = receiver.trace(wait.traceId);
    return (
      trace.some((span) => span.kind === SERVER_KIND) &&
      trace.some((span) => span.kind === CLIENT_KIND)
    );
  };
  await until(
    'three waits and their traces',
    () => waits().length === 3 && waits().every(complete),
  );
  await sleep(300);
  expect(waits()).toHaveLength(3);
  for (const wait of waits()) {
    expect(traceIds).toContain(wait.traceId);
    expect(attribute(wait, 'visitor_api.workspace.id')).toEqual({ stringValue: workspace.id });
    const waited = attribute(wait, 'visitor_api.queue.waited_ms') as { doubleValue: number };
    expect(waited.doubleValue).toBeGreaterThan(0);
    // Under the request's server span, before its page's statement.
    const trace = receiver.trace(wait.traceId);
    const server = trace.find((span) => span.kind === SERVER_KIND)!;
    expect(wait.parentSpanId).toBe(server.spanId);
  }
});

it('traces each webhook delivery attempt in the worker, without sending the receiver a traceparent', async () => {
  const receiver = new OtlpReceiver();
  receivers.push(receiver);
  const otlpPort = await receiver.start();
  const endpoint = new Receiver(() => 200);
  receivers.push(endpoint);
  const { workspace } = await createTenant(prisma);
  const created = await runAdminCommand(
    { DATABASE_URL: database.url, ...WEBHOOK_ENV },
    'webhook',
    'create',
    '--workspace',
    workspace.id,
    '--url',
    await endpoint.start(),
    '--json',
  );
  expect(created).toMatchObject({ status: 0 });
  const endpointId = (JSON.parse(created.stdout) as { id: string }).id;
  await createCompany(prisma, workspace.id);

  const worker = spawnBuilt('worker/main.js', {
    databaseUrl: database.url,
    env: {
      NODE_ENV: 'test',
      ...WEBHOOK_ENV,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      LOG_LEVEL: 'info',
      ...otlpEnv(otlpPort),
    },
  });
  processes.push(worker);
  await until('the delivery', () => endpoint.requests.length === 1, { withinMs: 60_000 });
  await until('the attempt span', () =>
    receiver.spans.some((span) => span.name === 'webhook attempt'),
  );
  await sleep(300);
  const attempt = receiver.spans.find((span) => span.name === 'webhook attempt')!;
  expect(attempt.service).toBe('visitor-read-api-webhook-worker');
  expect(attribute(attempt, 'visitor_api.webhook.endpoint_id')).toEqual({
    stringValue: endpointId,
  });
  expect(attribute(attempt, 'visitor_api.webhook.outcome')).toEqual({ stringValue: 'delivered' });
  const children = receiver.trace(attempt.traceId).filter((span) => span !== attempt);
  // The POST to the receiver, and the statement that recorded it.
  expect(children.some((span) => span.kind === CLIENT_KIND && span.name === 'POST')).toBe(true);
  expect(children.some((span) => span.scope.includes('instrumentation-pg'))).toBe(true);
  for (const child of children) expect(child.parentSpanId).not.toBe('');
  expect(endpoint.requests[0].headers.traceparent).toBeUndefined();

  worker.process.kill('SIGTERM');
  expect(await worker.exited).toMatchObject({ code: 0 });
});

it('sends nothing without an endpoint, not even to the default one, and logs no trace id', async () => {
  // The port an SDK would send to by default.
  const receiver = new OtlpReceiver();
  receivers.push(receiver);
  await receiver.start(4318);
  const { port, server } = await startServer({ OTEL_BSP_SCHEDULE_DELAY: '50' });
  const { key } = await createTenant(prisma);
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`http://127.0.0.1:${port}/v1/me`, {
      headers: {
        Authorization: `Bearer ${key}`,
        traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`,
      },
    });
    expect(response.status).toBe(200);
  }
  await sleep(500);
  server.process.kill('SIGTERM');
  expect(await server.exited).toMatchObject({ code: 0 });
  expect(receiver.requests).toBe(0);
  const lines = requestLines(server);
  expect(lines.length).toBeGreaterThanOrEqual(3);
  expect(lines.filter((line) => line.traceId !== undefined)).toEqual([]);
});

it('sends nothing when the SDK is disabled, an endpoint set', async () => {
  const receiver = new OtlpReceiver();
  receivers.push(receiver);
  const { port, server } = await startServer({
    ...otlpEnv(await receiver.start()),
    OTEL_SDK_DISABLED: 'true',
  });
  const { key } = await createTenant(prisma);
  const response = await fetch(`http://127.0.0.1:${port}/v1/me`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  expect(response.status).toBe(200);
  await sleep(500);
  server.process.kill('SIGTERM');
  expect(await server.exited).toMatchObject({ code: 0 });
  expect(receiver.requests).toBe(0);
});

it('refuses to start with an OTLP protocol other than http/protobuf', async () => {
  const server = spawnBuilt('main.js', {
    databaseUrl: database.url,
    env: {
      PORT: String(await findFreePort()),
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    },
  });
  processes.push(server);
  expect((await server.exited).code).not.toBe(0);
  expect(server.output.join('')).toContain(
    'OTEL_EXPORTER_OTLP_PROTOCOL=grpc: traces are exported over http/protobuf only',
  );
});
