import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Client } from 'pg';
import { Draining } from '../../../src/common/draining';
import { Database } from '../../../src/database/database';
import { LOG_DESTINATION } from '../../../src/logging/logging.module';
import { InFlightLimiter } from '../../../src/rate-limit/in-flight-limiter';
import { createTestApp, type TestApp } from '../../support/app';
import { partsOf, readStream, type StreamLine } from '../../support/change-stream';
import { createApiKey, createLead, insertCompanies } from '../../support/factories';
import { createTenant, expectErrorEnvelope, getWithKey, ISO_UTC_MILLIS } from '../../support/http';
import { loadLargestCompanies } from '../../support/largest-items';
import { listenOnLoopback, send } from '../../support/raw-http';
import { until } from '../../support/until';

/*
 * The change feeds as one stream (docs/changes.md, "The whole feed in one request"): the same
 * changes as the pages, in the same order, with checkpoints whose cursors mean what the pages'
 * do; the errors before any line; the bounds (time, a slow or stalled reader, a reader gone,
 * shutdown); the limits (per workspace, per instance, the budget). What is asserted is behaviour,
 * never a duration: where a bound is in time, the test makes its statements slow or its reader
 * still, and checks how the stream ended.
 */
type Feed = 'companies' | 'leads';

let t: TestApp;
let port: number;
/** Every line the application writes. */
const logLines: string[] = [];

beforeAll(async () => {
  t = await createTestApp({
    env: { LOG_LEVEL: 'info' },
    customize: (builder) => {
      builder
        .overrideProvider(LOG_DESTINATION)
        .useValue({ write: (line: string) => void logLines.push(line) });
    },
  });
  port = await listenOnLoopback(t.app);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

const streamPath = (feed: Feed, cursor?: string) =>
  `/v1/${feed}/changes/stream${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;

/** The whole feed through its pages of 1,000 after `cursor`: its changes and last cursor. */
async function pagesOf(
  key: string,
  feed: Feed,
  cursor?: string,
): Promise<{ changes: StreamLine[]; cursor: string }> {
  const changes: StreamLine[] = [];
  for (;;) {
    const query = `?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = await getWithKey(t.app, `/v1/${feed}/changes${query}`, key);
    expect(response.status).toBe(200);
    const body = response.body as { data: StreamLine[]; nextCursor: string; hasMore: boolean };
    changes.push(...body.data);
    cursor = body.nextCursor;
    if (!body.hasMore) return { changes, cursor };
  }
}

/** A workspace with companies (with contacts), leads and deletions in both feeds. */
async function populatedTenant(companies: number): Promise<{ workspaceId: string; key: string }> {
  const { workspace, key } = await createTenant(t.prisma);
  const ids = await insertCompanies(t.prisma, workspace.id, companies, { contactsEach: 2 });
  for (const id of ids.slice(0, 30)) await createLead(t.prisma, { id, workspaceId: workspace.id });
  // Deleted companies: a delete in the companies' feed, and their leads' in the leads' feed.
  const deleted = ids.slice(0, Math.min(10, Math.floor(companies / 2)));
  await t.prisma.company.deleteMany({ where: { id: { in: deleted } } });
  await t.prisma.company.update({ where: { id: ids[ids.length - 1] }, data: { name: 'Renamed' } });
  return { workspaceId: workspace.id, key };
}

/** The log line of the request with this id. */
function logLineOf(requestId: unknown): Record<string, unknown> | undefined {
  return logLines
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((line) => line.requestId === requestId && line.msg === 'request completed');
}

/** Counts the workspace's statements (each goes through the fair queue). */
function countStatements(workspaceId: string): () => number {
  const { fairQueue } = t.app.get(Database);
  const run = fairQueue.run.bind(fairQueue);
  let count = 0;
  jest.spyOn(fairQueue, 'run').mockImplementation((flow, task) => {
    if (flow === workspaceId) count++;
    return run(flow, task);
  });
  return () => count;
}

afterEach(() => jest.restoreAllMocks());

describe('the stream and the pages', () => {
  it.each(['companies', 'leads'] as const)(
    "the %s stream sends the pages' changes, in their order, with checkpoints the pages continue from",
    async (feed) => {
      const { key } = await populatedTenant(2_500);
      const pages = await pagesOf(key, feed);
      const read = await readStream(port, streamPath(feed), key);
      expect(read.status).toBe(200);
      expect(read.headers['content-type']).toBe('application/x-ndjson');
      const { changes, checkpoints, last } = partsOf(read.lines);
      expect(changes).toEqual(pages.changes);
      expect(last?.hasMore).toBe(false);
      // A checkpoint between every batch: the first of 100 changes, then of at most 1,000.
      expect(checkpoints.length).toBeGreaterThanOrEqual(Math.ceil((changes.length - 100) / 1000));
      // Each checkpoint's cursor, given to the pages, brings exactly the changes after it.
      let seen = 0;
      for (const [index, line] of read.lines.entries()) {
        if ('op' in line) seen++;
        else if (!('hasMore' in line) || index === read.lines.length - 1) {
          const rest = await pagesOf(key, feed, line.cursor as string);
          expect(rest.changes).toEqual(changes.slice(seen));
        }
      }
      // And the pages' last cursor, given to the stream: nothing more, caught up.
      const after = await readStream(port, streamPath(feed, pages.cursor), key);
      expect(partsOf(after.lines)).toEqual({
        changes: [],
        checkpoints: [],
        last: { cursor: expect.any(String), hasMore: false },
      });
    },
    60_000,
  );

  it('sends items larger than a page allows: a page cut by its size is read on where it stopped', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    // 150 companies of about 74 KB: the first page (100 asked) and the ranges after it each stop
    // after 4 MiB of changes.
    await loadLargestCompanies(t.database.url, workspace.id, 150);
    const pages = await pagesOf(key, 'companies');
    const read = await readStream(port, streamPath('companies'), key);
    const { changes, last } = partsOf(read.lines);
    expect(changes.map((change) => change.id)).toEqual(pages.changes.map((change) => change.id));
    expect(changes).toEqual(pages.changes);
    expect(last?.hasMore).toBe(false);
  }, 60_000);

  it('resumes from any checkpoint after a cut, with the stream: the same changes, none lost', async () => {
    const { key } = await populatedTenant(2_200);
    const whole = partsOf((await readStream(port, streamPath('companies'), key)).lines).changes;
    // Cut after 1,500 lines: resume from the last checkpoint before the cut.
    const cut = await readStream(port, streamPath('companies'), key, { cutAfterLines: 1_500 });
    expect(cut.ended).toBe(false);
    const before = partsOf(cut.lines);
    expect(before.last).toBeUndefined();
    const lastCheckpoint = cut.lines.map((line) => 'cursor' in line).lastIndexOf(true);
    const applied = cut.lines.slice(0, lastCheckpoint).filter((line) => 'op' in line);
    const resumed = await readStream(
      port,
      streamPath('companies', cut.lines[lastCheckpoint].cursor as string),
      key,
    );
    expect([...applied, ...partsOf(resumed.lines).changes]).toEqual(whole);
  }, 60_000);

  it('answers HEAD with the headers of the stream and no body', async () => {
    const { key } = await populatedTenant(50);
    const response = await send(port, streamPath('companies'), {
      method: 'HEAD',
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/x-ndjson');
    expect(response.text).toBe('');
  });
});

describe('refused before any line', () => {
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    ({ key, workspaceId } = await populatedTenant(20));
  });

  it.each([
    ['a cursor that is not one', '?cursor=nonsense', {}, ['cursor is not valid']],
    ['a page size', '?limit=10', {}, ['property limit should not exist']],
    ['another parameter', '?since=2026-01-01', {}, ['property since should not exist']],
    [
      'an Accept without NDJSON',
      '',
      { Accept: 'application/json' },
      ['Accept must allow application/x-ndjson'],
    ],
    [
      'an Accept that refuses NDJSON',
      '',
      { Accept: 'application/x-ndjson;q=0' },
      ['Accept must allow application/x-ndjson'],
    ],
    [
      'an Accept that refuses NDJSON by name, whatever */* allows',
      '',
      { Accept: '*/*, application/x-ndjson;q=0' },
      ['Accept must allow application/x-ndjson'],
    ],
  ])('400 for %s', async (_case, query, headers, message) => {
    const path = `/v1/companies/changes/stream${query}`;
    const response = await getWithKey(t.app, path, key).set(headers);
    expectErrorEnvelope(response, { status: 400, error: 'BAD_REQUEST', path, message });
  });

  it.each([
    ['no Accept', undefined],
    ['*/*', '*/*'],
    ['application/*', 'application/*'],
    ['NDJSON among others', 'application/json;q=0.5, application/x-ndjson'],
  ])('streams for %s', async (_case, accept) => {
    const read = await readStream(port, streamPath('companies'), key, {
      headers: accept === undefined ? {} : { Accept: accept },
    });
    expect(read.status).toBe(200);
    expect(partsOf(read.lines).last?.hasMore).toBe(false);
  });

  it("400 for the other feed's cursor, and for another workspace's", async () => {
    const leads = await pagesOf(key, 'leads');
    const other = await populatedTenant(5);
    const theirs = await pagesOf(other.key, 'companies');
    for (const cursor of [leads.cursor, theirs.cursor]) {
      const path = streamPath('companies', cursor);
      expectErrorEnvelope(await getWithKey(t.app, path, key), {
        status: 400,
        error: 'BAD_REQUEST',
        path,
        message: ['cursor is not valid'],
      });
    }
  });

  it('410 for a cursor before pruned deletions', async () => {
    const { cursor } = await pagesOf(key, 'companies');
    const sql = new Client({ connectionString: t.database.url });
    await sql.connect();
    try {
      await sql.query(
        `INSERT INTO change_horizons (workspace_id, feed, pruned_txid, pruned_id)
         VALUES ($1, 'companies', pg_current_xact_id(), 'co_')`,
        [workspaceId],
      );
    } finally {
      await sql.end();
    }
    const path = streamPath('companies', cursor);
    expectErrorEnvelope(await getWithKey(t.app, path, key), {
      status: 410,
      error: 'GONE',
      path,
      message: 'cursor has expired: start again without a cursor',
    });
  });

  it('403 for a key without the changes:read scope', async () => {
    const { workspace } = await createTenant(t.prisma);
    const { key: scoped } = await createApiKey(t.prisma, workspace.id, {
      scopes: ['companies:read'],
    });
    const response = await getWithKey(t.app, streamPath('companies'), scoped);
    expect(response.status).toBe(403);
  });
});

describe('as the pages are: key, budget, compression, request id, log line', () => {
  it('is one request against the budget, however many pages it sends', async () => {
    const { key } = await populatedTenant(2_500);
    const read = await readStream(port, streamPath('companies'), key);
    expect(partsOf(read.lines).checkpoints.length).toBeGreaterThan(2);
    expect(read.headers['x-ratelimit-remaining']).toBe('119');
    const next = await getWithKey(t.app, '/v1/me', key);
    expect(next.headers['x-ratelimit-remaining']).toBe('118');
  }, 30_000);

  it.each([
    ['br', brotliDecompressSync],
    ['gzip', gunzipSync],
  ] as const)(
    'is compressed with %s when asked, to the same lines',
    async (coding, decompress) => {
      const { key } = await populatedTenant(1_500);
      const plain = partsOf((await readStream(port, streamPath('companies'), key)).lines).changes;
      const compressed = await send(port, streamPath('companies'), {
        headers: { Authorization: `Bearer ${key}`, 'Accept-Encoding': coding },
      });
      expect(compressed.headers['content-encoding']).toBe(coding);
      const lines = decompress(compressed.body).toString('utf8').trimEnd().split('\n');
      const parts = partsOf(lines.map((line) => JSON.parse(line) as StreamLine));
      expect(parts.changes).toEqual(plain);
      expect(parts.last?.hasMore).toBe(false);
    },
    30_000,
  );

  it('echoes the request id, and logs what it sent and how it ended', async () => {
    const { key, workspaceId } = await populatedTenant(1_200);
    const read = await readStream(port, streamPath('companies'), key, {
      headers: { 'X-Request-Id': 'stream-test-1' },
    });
    expect(read.headers['x-request-id']).toBe('stream-test-1');
    const changes = partsOf(read.lines).changes.length;
    const { bytes } = read;
    await new Promise((resolve) => setImmediate(resolve));
    expect(logLineOf('stream-test-1')).toMatchObject({
      statusCode: 200,
      path: '/v1/companies/changes/stream',
      workspaceId,
      stream: { changes, bytes, ended: 'completed' },
    });
  }, 30_000);
});

describe('bounded', () => {
  it('ends at its time bound, normally, with the cursor to go on from', async () => {
    const bounded = await createTestApp({ env: { CHANGE_STREAM_MAX_SECONDS: '1' } });
    try {
      const boundedPort = await listenOnLoopback(bounded.app);
      const { workspace, key } = await createTenant(bounded.prisma);
      await insertCompanies(bounded.prisma, workspace.id, 3_000);
      // Each statement of the workspace takes 400 ms: the bound comes after the first pages.
      const { fairQueue } = bounded.app.get(Database);
      const run = fairQueue.run.bind(fairQueue);
      jest.spyOn(fairQueue, 'run').mockImplementation((flow, task) =>
        run(flow, async () => {
          await new Promise((resolve) => setTimeout(resolve, 400));
          return task();
        }),
      );
      const first = await readStream(boundedPort, streamPath('companies'), key);
      const parts = partsOf(first.lines);
      expect(parts.last).toEqual({ cursor: expect.any(String), hasMore: true });
      expect(parts.changes.length).toBeLessThan(3_000);
      jest.restoreAllMocks();
      const rest = await readStream(boundedPort, streamPath('companies', parts.last!.cursor), key);
      const ids = [...parts.changes, ...partsOf(rest.lines).changes].map((change) => change.id);
      expect(ids).toHaveLength(3_000);
      expect(new Set(ids).size).toBe(3_000);
      expect(partsOf(rest.lines).last?.hasMore).toBe(false);
    } finally {
      jest.restoreAllMocks();
      await bounded.close();
    }
  }, 60_000);

  it('reads ahead of a slow reader by a few pages only, then goes on as it reads', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    // About 74 KB a company: 600 of them are 44 MB, far more than the socket holds.
    await loadLargestCompanies(t.database.url, workspace.id, 600);
    const statements = countStatements(workspace.id);
    let heldAt = -1;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The reader reads nothing for a while, and the sockets' buffers fill.
    const reading = readStream(port, streamPath('companies'), key, { hold: released });
    // While it holds, the statements stop: each page waits for the one before to reach the socket.
    await until('a statement of the stream', () => statements() > 0);
    // Then until no statement has started for 2 s (the pages take a few hundred ms each).
    let before = -1;
    await until(
      'no statement of the stream for 2 s',
      () => {
        const now = statements();
        const still = now === before;
        before = now;
        return still;
      },
      { everyMs: 2_000, withinMs: 40_000 },
    );
    heldAt = statements();
    // 600 companies of 57 a page (4 MiB) are 11 pages and more: far fewer were read.
    expect(heldAt).toBeGreaterThan(0);
    expect(heldAt).toBeLessThanOrEqual(6);
    release();
    const read = await reading;
    expect(partsOf(read.lines).changes).toHaveLength(600);
    expect(statements()).toBeGreaterThan(heldAt);
  }, 60_000);

  it('ends the work of a reader that left, and gives its connections back', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    await loadLargestCompanies(t.database.url, workspace.id, 600);
    const statements = countStatements(workspace.id);
    const cut = await readStream(port, streamPath('companies'), key, { cutAfterLines: 5 });
    expect(cut.ended).toBe(false);
    // The statements under way end; none after them.
    const database = t.app.get(Database);
    const sql = new Client({ connectionString: t.database.url });
    await sql.connect();
    try {
      const active = async () =>
        Number(
          (
            await sql.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity
               WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
            )
          ).rows[0].n,
        );
      await until(
        "the cut stream's statements to end",
        async () => (await active()) === 0 && database.fairQueue.busy === 0,
      );
      expect(await active()).toBe(0);
      expect(database.fairQueue.busy).toBe(0);
      const after = statements();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(statements()).toBe(after);
      // 600 companies need 11 pages and more: the stream stopped well before.
      expect(after).toBeLessThanOrEqual(6);
      expect(t.app.get(InFlightLimiter).remaining(workspace.id)).toBe(20);
    } finally {
      await sql.end();
    }
  }, 60_000);

  it('ends with its cursor when the instance shuts down', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    await insertCompanies(t.prisma, workspace.id, 3_000);
    const draining = t.app.get(Draining);
    const controller = new AbortController();
    jest.spyOn(draining, 'signal', 'get').mockReturnValue(controller.signal);
    // Each statement takes a while: the shutdown comes while pages remain.
    const { fairQueue } = t.app.get(Database);
    const run = fairQueue.run.bind(fairQueue);
    jest.spyOn(fairQueue, 'run').mockImplementation((flow, task) =>
      run(flow, async () => {
        if (flow === workspace.id) await new Promise((resolve) => setTimeout(resolve, 200));
        return task();
      }),
    );
    const read = await readStream(port, streamPath('companies'), key, {
      // The shutdown begins once the first checkpoint has come.
      onLine: (line) => {
        if ('cursor' in line) controller.abort();
      },
    });
    const parts = partsOf(read.lines);
    expect(parts.last).toEqual({ cursor: expect.any(String), hasMore: true });
    expect(parts.changes.length).toBeLessThan(3_000);
    const id = read.headers['x-request-id'];
    await new Promise((resolve) => setImmediate(resolve));
    expect(logLineOf(id)).toMatchObject({ stream: { ended: 'shutdown' } });
  }, 30_000);
});

describe('limited', () => {
  let limited: TestApp;
  let limitedPort: number;

  beforeAll(async () => {
    limited = await createTestApp({
      env: {
        MAX_CHANGE_STREAMS_PER_WORKSPACE: '1',
        MAX_CHANGE_STREAMS: '2',
        CHANGE_STREAM_STALL_SECONDS: '1',
      },
    });
    limitedPort = await listenOnLoopback(limited.app);
  }, 60_000);

  afterAll(async () => {
    await limited?.close();
  });

  it('429 beyond the streams of a workspace, 503 beyond those of the instance, each with Retry-After', async () => {
    const a = await createTenant(limited.prisma);
    const b = await createTenant(limited.prisma);
    const c = await createTenant(limited.prisma);
    const { fairQueue } = limited.app.get(Database);
    const run = fairQueue.run.bind(fairQueue);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The first statement of A's and of B's streams held: both streams running.
    const held = new Set([a.workspace.id, b.workspace.id]);
    jest.spyOn(fairQueue, 'run').mockImplementation((flow, task) => {
      if (!held.delete(flow)) return run(flow, task);
      return run(flow, () => released.then(task));
    });
    try {
      const running = [a, b].map(({ key }) => readStream(limitedPort, streamPath('leads'), key));
      await until("A's and B's streams to hold their statements", () => fairQueue.busy >= 2, {
        everyMs: 10,
      });
      const again = await getWithKey(limited.app, streamPath('companies'), a.key);
      expectErrorEnvelope(again, {
        status: 429,
        error: 'TOO_MANY_REQUESTS',
        path: streamPath('companies'),
        message: 'Too many change streams in progress for this workspace: at most 1 at a time',
      });
      expect(again.headers['retry-after']).toBe('5');
      const third = await getWithKey(limited.app, streamPath('companies'), c.key);
      expectErrorEnvelope(third, {
        status: 503,
        error: 'SERVICE_UNAVAILABLE',
        path: streamPath('companies'),
        message: 'Service temporarily unavailable',
      });
      expect(third.headers['retry-after']).toBe('5');
      // Pages are not streams: the workspace at its stream limit reads its pages.
      expect((await getWithKey(limited.app, '/v1/companies/changes', a.key)).status).toBe(200);
      release();
      for (const read of await Promise.all(running)) {
        expect(partsOf(read.lines).last?.hasMore).toBe(false);
      }
      // The streams ended: their places are free again.
      const after = await readStream(limitedPort, streamPath('companies'), c.key);
      expect(after.status).toBe(200);
    } finally {
      release();
    }
  });

  it('cuts a reader that takes nothing for the stall timeout, and frees its places', async () => {
    const { workspace, key } = await createTenant(limited.prisma);
    await loadLargestCompanies(limited.database.url, workspace.id, 300);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const reading = readStream(limitedPort, streamPath('companies'), key, { hold: held });
    // The reader takes nothing: the server cuts the stream after the stall timeout, and its
    // in-flight place is free again (the reader has read nothing yet).
    const limiter = limited.app.get(InFlightLimiter);
    await until('the stream to take its place', () => limiter.remaining(workspace.id) < 20);
    expect(limiter.remaining(workspace.id)).toBe(19);
    await until('the cut stream to free its place', () => limiter.remaining(workspace.id) === 20);
    expect(limiter.remaining(workspace.id)).toBe(20);
    release();
    // What the socket held reaches the reader, then the end: no last line, a cut stream.
    const read = await reading;
    expect(read.ended).toBe(false);
    expect(partsOf(read.lines).last).toBeUndefined();
    expect((await readStream(limitedPort, streamPath('leads'), key)).status).toBe(200);
  }, 60_000);
});

it('formats every date-time of a change as ISO 8601 UTC with milliseconds', async () => {
  const { key } = await populatedTenant(5);
  const read = await readStream(port, streamPath('companies'), key);
  for (const change of partsOf(read.lines).changes) {
    expect(change.changedAt).toMatch(ISO_UTC_MILLIS);
  }
});
