import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { verifyWebhook } from '../../../clients/typescript/src/webhooks';
import type { WebhookWorker } from '../../../src/worker/webhook-worker';
import { expectRefusal, runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import { Receiver, testWorker, verifyWith, WEBHOOK_ENV } from '../../support/webhooks';
import { until } from '../../support/until';

// Visit webhooks end to end (docs/webhooks.md, "Visit events" and "Page patterns"): the visit
// events only where asked for, the visit as GET /v1/visits/{id} returns it, an endpoint's page
// patterns, deletions matched by the paths the visit had, and the admin tool's refusals.

interface Endpoint {
  id: string;
  secret: string;
  eventTypes: string[];
  pages: string[] | null;
}

interface PageLine {
  path: string;
  title?: string | null;
}

// Each test waits for deliveries, up to 30 s each when the machine is loaded.
jest.setTimeout(180_000);

describe('visit webhooks', () => {
  let t: TestApp;
  let worker: WebhookWorker;
  let sql: Client;
  let files: string;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    sql = new Client({ connectionString: t.database.url });
    await sql.connect();
    worker = testWorker(t.database.url, { clock: t.clock, random: () => 0 });
    await worker.start();
    files = mkdtempSync(join(tmpdir(), 'visit-webhooks-'));
  });

  afterAll(async () => {
    await worker?.stop();
    await Promise.all(receivers.map((receiver) => receiver.stop()));
    await sql?.end();
    await t?.close();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  const admin = (...argv: string[]) =>
    runAdminCommand({ DATABASE_URL: t.database.url, ...WEBHOOK_ENV }, ...argv);

  async function adminJson<T>(...argv: string[]): Promise<T> {
    const run = await admin(...argv, '--json');
    expect(run).toMatchObject({ status: 0, stderr: '' });
    return JSON.parse(run.stdout) as T;
  }

  async function receiver(): Promise<{ receiver: Receiver; url: string }> {
    const created = new Receiver();
    receivers.push(created);
    return { receiver: created, url: await created.start() };
  }

  const endpoint = (workspaceId: string, url: string, ...more: string[]) =>
    adminJson<Endpoint>('webhook', 'create', '--workspace', workspaceId, '--url', url, ...more);

  let visits = 0;
  /** A visit of `companyId` an hour ago, as import-visits reads it, with a page per path. */
  function visitLine(companyId: string, pages: PageLine[], id = `vi_${++visits}`) {
    const startedAt = new Date(Date.now() - 60 * 60 * 1000);
    return {
      id,
      companyId,
      startedAt: startedAt.toISOString(),
      endedAt: new Date(startedAt.getTime() + pages.length * 1000).toISOString(),
      referrer: null,
      source: null,
      medium: null,
      campaign: null,
      term: null,
      content: null,
      deviceType: 'desktop',
      country: 'FR',
      pages: pages.map((page, n) => ({
        hostname: 'www.example.com',
        path: page.path,
        title: page.title ?? null,
        viewedAt: new Date(startedAt.getTime() + n * 1000).toISOString(),
        secondsOnPage: null,
      })),
    };
  }

  async function importVisits(workspaceId: string, lines: object[]): Promise<void> {
    const file = join(files, `${workspaceId}-${++visits}.ndjson`);
    writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n'));
    const run = await admin('import-visits', '--workspace', workspaceId, '--file', file);
    expect(run).toMatchObject({ status: 0, stderr: '' });
  }

  async function deleteVisits(workspaceId: string, ...ids: string[]): Promise<void> {
    const run = await admin('delete', '--workspace', workspaceId, '--visits', ids.join(','));
    expect(run).toMatchObject({ status: 0, stderr: '' });
  }

  /** The types and item ids of the events made for an endpoint, sorted. */
  async function eventsOf(endpointId: string): Promise<string[]> {
    const { rows } = await sql.query<{ event: string }>(
      `SELECT type || ' ' || (body::json -> 'data' ->> 'id') AS event FROM webhook_events
       WHERE endpoint_id = $1 ORDER BY 1`,
      [endpointId],
    );
    return rows.map((row) => row.event);
  }

  /**
   * Waits until the endpoint has passed every change committed so far: a company created now is
   * later in the feeds than them, and the dispatcher reads an endpoint's feeds in one transaction
   * (companies first), so once its event is made, those of every earlier change are too. Then
   * until each event made is delivered to `r`. The endpoint must take company.upserted.
   */
  async function settled(workspaceId: string, endpointId: string, r: Receiver): Promise<string> {
    const marker = await createCompany(t.prisma, workspaceId);
    await until('the marker company', async () =>
      (await eventsOf(endpointId)).includes(`company.upserted ${marker.id}`),
    );
    await until('every event delivered', async () => {
      const { rows } = await sql.query<{ pending: number; events: number }>(
        `SELECT count(*) FILTER (WHERE state <> 'delivered')::int AS pending, count(*)::int AS events
         FROM webhook_events WHERE endpoint_id = $1`,
        [endpointId],
      );
      return rows[0].pending === 0 && r.requests.length >= rows[0].events;
    });
    return marker.id;
  }

  /** The visit events a receiver got, as `type id`, sorted. */
  const visitEvents = (r: Receiver) =>
    r
      .events()
      .filter((event) => event.type.startsWith('visit.'))
      .map((event) => `${event.type} ${String(event.data.id)}`)
      .sort();

  it('sends the visit events to an endpoint that asked for them, signed, each visit as GET /v1/visits/{id} returns it; not to an endpoint of the default types', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    const { receiver: all, url: allUrl } = await receiver();
    const { receiver: plain, url: plainUrl } = await receiver();
    const asked = await endpoint(
      workspace.id,
      allUrl,
      '--events',
      'visit.upserted,visit.deleted,company.upserted',
    );
    const byDefault = await endpoint(workspace.id, plainUrl);
    expect(asked).toMatchObject({
      eventTypes: ['visit.upserted', 'visit.deleted', 'company.upserted'],
      pages: null,
    });
    expect(byDefault.eventTypes).toEqual([
      'company.upserted',
      'company.deleted',
      'lead.upserted',
      'lead.deleted',
    ]);

    const first = visitLine(company.id, [{ path: '/', title: 'Home' }, { path: '/pricing' }]);
    const second = visitLine(company.id, [{ path: '/blog/a' }]);
    await importVisits(workspace.id, [first, second]);
    await settled(workspace.id, asked.id, all);
    expect(visitEvents(all)).toEqual([`visit.upserted ${first.id}`, `visit.upserted ${second.id}`]);
    for (const event of all.events().filter((e) => e.type === 'visit.upserted')) {
      const read = await getWithKey(t.app, `/v1/visits/${String(event.data.id)}`, key);
      expect(read.status).toBe(200);
      expect(event.data).toEqual(read.body);
    }

    await deleteVisits(workspace.id, first.id);
    await settled(workspace.id, asked.id, all);
    expect(visitEvents(all)).toEqual([
      `visit.deleted ${first.id}`,
      `visit.upserted ${first.id}`,
      `visit.upserted ${second.id}`,
    ]);
    const deletion = all.events().find((e) => e.type === 'visit.deleted');
    expect(deletion?.data).toEqual({ id: first.id });

    for (const received of all.requests) {
      expect(verifyWith(asked.secret, received, t.clock.now())).toEqual(JSON.parse(received.body));
      const now = new Date(t.clock.now());
      const { headers, body } = received;
      expect(verifyWebhook(asked.secret, headers, body, { now })).toEqual(JSON.parse(body));
      expect(received.headers['webhook-id']).toBe(JSON.parse(body).id);
    }

    // The default endpoint: its companies' events, no visit's.
    await settled(workspace.id, byDefault.id, plain);
    expect(plain.requests.length).toBeGreaterThan(0);
    expect((await eventsOf(byDefault.id)).filter((e) => e.startsWith('visit.'))).toEqual([]);
    expect(visitEvents(plain)).toEqual([]);
  });

  it('with --pages, sends only the visit events of visits with a matching page view, deletions by the paths the visit had; company events as without', async () => {
    const { workspace } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    const { receiver: filtered, url: filteredUrl } = await receiver();
    const { receiver: every, url: everyUrl } = await receiver();
    const types = 'visit.upserted,visit.deleted,company.upserted';
    const paged = await endpoint(
      workspace.id,
      filteredUrl,
      '--events',
      types,
      '--pages',
      '/pricing,/blog/*',
    );
    const unpaged = await endpoint(workspace.id, everyUrl, '--events', types);
    expect(paged.pages).toEqual(['/pricing', '/blog/*']);

    const pricing = visitLine(company.id, [{ path: '/' }, { path: '/pricing' }]);
    const blogPost = visitLine(company.id, [{ path: '/blog/a' }]);
    const blogIndex = visitLine(company.id, [{ path: '/blog/' }]);
    // None matches: a longer path than an exact pattern, the prefix without its slash, another
    // case, and a path that merely starts like an exact pattern.
    const enterprise = visitLine(company.id, [{ path: '/pricing/enterprise' }]);
    const blog = visitLine(company.id, [{ path: '/blog' }]);
    const capital = visitLine(company.id, [{ path: '/Pricing' }]);
    const home = visitLine(company.id, [{ path: '/' }, { path: '/pricing-old' }]);
    const all = [pricing, blogPost, blogIndex, enterprise, blog, capital, home];
    await importVisits(workspace.id, all);

    const everyMarker = await settled(workspace.id, unpaged.id, every);
    expect(visitEvents(every)).toEqual(all.map((v) => `visit.upserted ${v.id}`).sort());
    const filteredMarker = await settled(workspace.id, paged.id, filtered);
    expect(visitEvents(filtered)).toEqual(
      [pricing, blogPost, blogIndex].map((v) => `visit.upserted ${v.id}`).sort(),
    );
    // Company events are not filtered: the companies with no visit come all the same.
    const companies = filtered.events().filter((e) => e.type === 'company.upserted');
    expect(companies.map((e) => e.data.id).sort()).toEqual([everyMarker, filteredMarker].sort());

    // A visit imported again with a matching page now: its upsert comes.
    const reached = { ...enterprise, pages: [...enterprise.pages, { ...enterprise.pages[0] }] };
    reached.pages[1].path = '/pricing';
    await importVisits(workspace.id, [reached]);
    await settled(workspace.id, paged.id, filtered);
    expect(visitEvents(filtered)).toEqual(
      [pricing, blogPost, blogIndex, enterprise].map((v) => `visit.upserted ${v.id}`).sort(),
    );

    // Deleted: a visit that matched, one that never did, and one through its company.
    await deleteVisits(workspace.id, pricing.id, blog.id);
    const { rows } = await sql.query<{ id: string; deleted_paths: string[] }>(
      `SELECT id, deleted_paths FROM visit_changes WHERE workspace_id = $1 AND id = ANY($2)
       ORDER BY id`,
      [workspace.id, [pricing.id, blog.id]],
    );
    expect(rows).toEqual(
      [
        { id: pricing.id, deleted_paths: ['/', '/pricing'] },
        { id: blog.id, deleted_paths: ['/blog'] },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    const other = await createCompany(t.prisma, workspace.id);
    const ofOther = visitLine(other.id, [{ path: '/blog/b' }]);
    const unmatchedOfOther = visitLine(other.id, [{ path: '/careers' }]);
    await importVisits(workspace.id, [ofOther, unmatchedOfOther]);
    // The feed gives each visit's latest state: a dispatch that first reads it after the company's
    // deletion sees the deletion alone. Its upsert is asserted, so it is sent before.
    await settled(workspace.id, paged.id, filtered);
    const run = await admin('delete', '--workspace', workspace.id, '--companies', other.id);
    expect(run.status).toBe(0);

    await settled(workspace.id, paged.id, filtered);
    expect(visitEvents(filtered)).toEqual(
      [
        ...[pricing, blogPost, blogIndex, enterprise, ofOther].map((v) => `visit.upserted ${v.id}`),
        `visit.deleted ${pricing.id}`,
        `visit.deleted ${ofOther.id}`,
      ].sort(),
    );
    await settled(workspace.id, unpaged.id, every);
    expect(visitEvents(every).filter((e) => e.startsWith('visit.deleted'))).toEqual(
      [pricing, blog, ofOther, unmatchedOfOther].map((v) => `visit.deleted ${v.id}`).sort(),
    );
  });

  it('makes no event of a visit past the retention, which GET /v1/visits/{id} does not show either', async () => {
    const { workspace, key } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    const { receiver: r, url } = await receiver();
    const { id } = await endpoint(workspace.id, url, '--events', 'visit.upserted,company.upserted');
    // Written by a plain SQL session (the import refuses such a visit): one started 400 days ago,
    // past the default retention of 395, and one of today.
    const old = new Date(Date.now() - 400 * 24 * 60 * 60 * 1000);
    const today = new Date(Date.now() - 60 * 1000);
    await sql.query('SELECT visit_partitions_make($1, $1)', [old]);
    for (const [visitId, startedAt] of [
      ['vi_old', old],
      ['vi_today', today],
    ] as const) {
      await sql.query(
        `WITH visit AS (
           INSERT INTO visits (workspace_id, id, company_id, started_at, ended_at, page_view_count,
             landing_page, device_type)
           VALUES ($1, $2, $3, $4, $4, 1, '/pricing', 'desktop'))
         INSERT INTO page_views (workspace_id, visit_id, visit_started_at, position, company_id,
           hostname, path, viewed_at)
         VALUES ($1, $2, $4, 0, $3, 'www.example.com', '/pricing', $4)`,
        [workspace.id, visitId, company.id, startedAt],
      );
    }
    await getWithKey(t.app, '/v1/visits/vi_old', key).expect(404);
    await settled(workspace.id, id, r);
    expect(visitEvents(r)).toEqual(['visit.upserted vi_today']);
  });

  it('lists each endpoint with its page patterns, in the table and in --json', async () => {
    const { workspace } = await createTenant(t.prisma);
    const { url } = await receiver();
    const created = await admin(
      'webhook',
      'create',
      '--workspace',
      workspace.id,
      '--url',
      url,
      '--events',
      'visit.upserted',
      '--pages',
      '/pricing,/demo*',
      '--pages',
      '/pricing',
      '--pages',
      '/docs/*',
    );
    expect(created.status).toBe(0);
    expect(created.stdout).toMatch(
      /\(visit\.upserted; visits with a page view of \/pricing,\/demo\*,\/docs\/\*\)/,
    );
    const plain = await endpoint(workspace.id, url);

    const listed = await adminJson<{ id: string; eventTypes: string[]; pages: unknown }[]>(
      'webhook',
      'list',
      '--workspace',
      workspace.id,
    );
    expect(listed.map(({ eventTypes, pages }) => ({ eventTypes, pages }))).toEqual([
      { eventTypes: ['visit.upserted'], pages: ['/pricing', '/demo*', '/docs/*'] },
      { eventTypes: plain.eventTypes, pages: null },
    ]);

    const table = await admin('webhook', 'list', '--workspace', workspace.id);
    expect(table.status).toBe(0);
    const [header, paged, unpaged] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/ EVENTS +PAGES$/);
    expect(paged).toMatch(/ visit\.upserted +\/pricing,\/demo\*,\/docs\/\*$/);
    expect(unpaged).toMatch(/ company\.upserted,company\.deleted,lead\.upserted,lead\.deleted +-$/);
  });

  const VISITS = ['--events', 'visit.upserted'];
  it.each([
    [
      'a pattern without its /',
      [...VISITS, '--pages', 'pricing'],
      /"pricing": it must start with \//,
    ],
    ['a * inside', [...VISITS, '--pages', '/a*b'], /"\/a\*b": it may hold \* only at its end/],
    ['a query string', [...VISITS, '--pages', '/a?b=1'], /"\/a\?b=1": it must not hold \? or #/],
    ['an empty pattern', [...VISITS, '--pages', '/a,,/b'], /"": it is empty/],
    [
      'a pattern of 2,049 characters',
      [...VISITS, '--pages', `/${'a'.repeat(2048)}`],
      /it must be at most 2048 characters/,
    ],
    [
      '11 patterns',
      [...VISITS, '--pages', Array.from({ length: 11 }, (_, n) => `/${n}`).join()],
      /--pages has 11 patterns: give 1 to 10, comma-separated/,
    ],
    [
      '11 patterns over two flags',
      [...VISITS, '--pages', '/1,/2,/3,/4,/5,/6', '--pages', '/7,/8,/9,/10,/11'],
      /--pages has 11 patterns/,
    ],
    [
      '--pages with the default types',
      ['--pages', '/pricing'],
      /--pages filters the visit events only: give --events with visit\.upserted or visit\.deleted/,
    ],
    [
      '--pages without a visit type',
      ['--events', 'company.upserted,lead.deleted', '--pages', '/pricing'],
      /--pages filters the visit events only/,
    ],
    [
      'an unknown type',
      ['--events', 'visit.viewed'],
      /unknown event type "visit\.viewed"; the types are .*visit\.deleted/,
    ],
  ])(
    'refuses webhook create with %s, in one line, and writes nothing',
    async (_what, flags, message) => {
      const { workspace } = await createTenant(t.prisma);
      const run = await admin(
        'webhook',
        'create',
        '--workspace',
        workspace.id,
        '--url',
        'http://127.0.0.1:9/hooks',
        ...flags,
      );
      expectRefusal(run, message);
      expect(await adminJson('webhook', 'list', '--workspace', workspace.id)).toEqual([]);
    },
  );
});
