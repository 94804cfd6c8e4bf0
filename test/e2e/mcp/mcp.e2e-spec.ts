import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import request from 'supertest';
import { LOG_DESTINATION } from '../../../src/logging/logging.module';
import { createTestApp, listening, type TestApp } from '../../support/app';
import { waitForLockWaiter } from '../../support/database';
import {
  createApiKey,
  createCompany,
  createContact,
  createLead,
  createVisit,
} from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';

/*
 * POST /mcp with the MCP SDK's own client (docs/agents.md): the tools, their schemas and
 * annotations; each tool's structuredContent equal to the REST body for the same key and
 * parameters; isolation; the same 401, the same per-minute budget; Origin; both protocol eras.
 * Visits are within the retention, so their dates are counted from now (WEEK_AGO and the
 * factory's); both reads of a comparison see the same rows.
 */

const WEEK_AGO = new Date(Date.now() - 7 * 86_400_000).toISOString();

type Era = 'legacy' | '2026-07-28';

const hasCurl = () => spawnSync('curl', ['--version']).status === 0;

async function connect(baseUrl: string, key: string, era: Era = 'legacy'): Promise<Client> {
  const client = new Client(
    { name: 'test-agent', version: '1.0.0' },
    era === 'legacy' ? {} : { versionNegotiation: { mode: { pin: era } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

let t: TestApp;
let baseUrl: string;
let tenant: { workspace: { id: string }; key: string };
let other: { workspace: { id: string }; key: string };
let companyId: string;
let otherCompanyId: string;
let leadId: string;
let visitIds: string[];
let otherVisitIds: string[];

beforeAll(async () => {
  t = await createTestApp({
    env: { RATE_LIMIT_PER_MINUTE: '1000000', MCP_ALLOWED_ORIGINS: 'https://app.example.com' },
  });
  baseUrl = await listening(t);
  tenant = await createTenant(t.prisma);
  other = await createTenant(t.prisma);
  for (const [i, score] of [92, 75, 40].entries()) {
    const company = await createCompany(t.prisma, tenant.workspace.id, {
      name: `Acme ${i}`,
      domain: i === 0 ? 'acme.example' : `acme-${i}.example`,
      intentScore: score,
      intentLevel: score >= 70 ? 'hot' : 'cold',
      crmStatus: i === 0 ? 'new' : 'in_crm',
    });
    await createContact(t.prisma, company, { email: `c${i}@acme.example` });
    const lead = await createLead(t.prisma, company, { intentScore: score });
    if (i === 0) {
      companyId = company.id;
      leadId = lead.id;
    }
  }
  const otherCompany = await createCompany(t.prisma, other.workspace.id, { intentScore: 99 });
  otherCompanyId = otherCompany.id;
  // Newest first: the hot company's pricing visit, its docs visit, then a cold one's; and one
  // more than a week ago.
  const [hot, , cold] = await t.prisma.company.findMany({
    where: { workspaceId: tenant.workspace.id },
    orderBy: { intentScore: 'desc' },
  });
  const hoursAgo = (hours: number) => new Date(Math.floor(Date.now() / 1000 - hours * 3600) * 1000);
  visitIds = [];
  for (const [company, hours, paths] of [
    [hot, 1, ['/', '/pricing']],
    [hot, 2, ['/docs/api', '/docs/mcp']],
    [cold, 3, ['/blog/launch']],
    [cold, 24 * 10, ['/pricing']],
  ] as const) {
    const { visit } = await createVisit(t.prisma, company, {
      startedAt: hoursAgo(hours),
      pages: paths.map((path) => ({ path })),
    });
    visitIds.push(visit.id);
  }
  otherVisitIds = [
    (await createVisit(t.prisma, otherCompany)).visit.id,
    (await createVisit(t.prisma, otherCompany, { startedAt: hoursAgo(2) })).visit.id,
  ];
});

afterAll(async () => {
  await t.close();
});

describe.each<Era>(['legacy', '2026-07-28'])('the %s protocol era', (era) => {
  let client: Client;

  beforeAll(async () => {
    client = await connect(baseUrl, tenant.key, era);
  });

  afterAll(async () => {
    await client.close();
  });

  it('lists the nine read-only tools with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_company',
      'get_lead',
      'get_visit',
      'get_workspace',
      'list_companies',
      'list_company_changes',
      'list_lead_changes',
      'list_leads',
      'list_visits',
    ]);
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({
        readOnlyHint: true,
        idempotentHint: true,
        destructiveHint: false,
      });
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description?.length).toBeGreaterThan(20);
    }
    const list = tools.find((tool) => tool.name === 'list_companies');
    expect(Object.keys(list?.inputSchema.properties ?? {})).toEqual([
      'limit',
      'offset',
      'since',
      'intentLevel',
      'crmStatus',
      'minIntentScore',
      'country',
      'domain',
      'q',
      'visitedPage',
      'visitedSince',
      'fields',
    ]);
    expect(tools.find((tool) => tool.name === 'get_company')?.inputSchema.required).toEqual(['id']);
    const visits = tools.find((tool) => tool.name === 'list_visits');
    expect(Object.keys(visits?.inputSchema.properties ?? {})).toEqual([
      'limit',
      'cursor',
      'since',
      'until',
      'page',
      'companyId',
      'fields',
    ]);
    expect(visits?.inputSchema.properties?.limit).toMatchObject({ default: 20, maximum: 50 });
    const visit = tools.find((tool) => tool.name === 'get_visit');
    expect(visit?.inputSchema.required).toEqual(['id']);
    expect(Object.keys(visit?.inputSchema.properties ?? {})).toEqual(['id', 'fields']);
  });

  it.each([
    ['get_workspace', {}, '/v1/me'],
    ['list_companies', { limit: 2 }, '/v1/companies?limit=2'],
    [
      'list_companies',
      { limit: 10, intentLevel: ['hot'], crmStatus: ['in_crm'], minIntentScore: 50 },
      '/v1/companies?limit=10&intentLevel=hot&crmStatus=in_crm&minIntentScore=50',
    ],
    [
      'list_companies',
      { limit: 10, domain: ['www.ACME.example', 'none.example'] },
      '/v1/companies?limit=10&domain=www.ACME.example,none.example',
    ],
    [
      'list_companies',
      { limit: 10, q: 'Acme', minIntentScore: 50 },
      '/v1/companies?limit=10&q=Acme&minIntentScore=50',
    ],
    ['list_leads', { limit: 10, offset: 1 }, '/v1/leads?limit=10&offset=1'],
    [
      'list_companies',
      { limit: 10, fields: ['name', 'contacts.email'] },
      '/v1/companies?limit=10&fields=name,contacts.email',
    ],
    ['list_leads', { limit: 10, fields: ['companyName'] }, '/v1/leads?limit=10&fields=companyName'],
    [
      'list_companies',
      { limit: 10, visitedPage: ['/pricing'], visitedSince: WEEK_AGO },
      `/v1/companies?limit=10&visitedPage=/pricing&visitedSince=${WEEK_AGO}`,
    ],
    [
      'list_companies',
      { limit: 10, visitedPage: '/docs/*,/blog/*', minIntentScore: 30 },
      '/v1/companies?limit=10&visitedPage=/docs/*,/blog/*&minIntentScore=30',
    ],
    ['list_visits', {}, '/v1/visits?limit=20'],
    ['list_visits', { limit: 2 }, '/v1/visits?limit=2'],
    [
      'list_visits',
      { limit: 10, page: ['/pricing', '/docs/*'], since: WEEK_AGO },
      `/v1/visits?limit=10&page=/pricing,/docs/*&since=${WEEK_AGO}`,
    ],
    [
      'list_visits',
      { limit: 10, until: WEEK_AGO, fields: ['companyId', 'pages.path'] },
      `/v1/visits?limit=10&until=${WEEK_AGO}&fields=companyId,pages.path`,
    ],
    ['list_company_changes', { limit: 2 }, '/v1/companies/changes?limit=2'],
    ['list_lead_changes', { limit: 50 }, '/v1/leads/changes?limit=50'],
  ])('%s %j: structuredContent is the REST body', async (name, args, path) => {
    const result = await client.callTool({ name, arguments: args });
    const rest = await getWithKey(t.app, path, tenant.key);
    expect(rest.status).toBe(200);
    expect(result.isError).toBeFalsy();
    // A feed's cursor carries the xmin of its first read, which other work on the cluster moves
    // between the two reads: a feed's page is the REST page but for that part of the cursor.
    const feed = path.includes('/changes');
    expect(result.structuredContent).toStrictEqual(
      feed ? { ...rest.body, nextCursor: expect.any(String) } : rest.body,
    );
    // Two empty pages would be equal whatever the tool did: each of these lists matches some rows.
    expect((rest.body as { data: unknown[] }).data?.length ?? 1).toBeGreaterThan(0);
    // One text block: a summary line, then the same JSON.
    const [block] = result.content as { type: string; text: string }[];
    const [summary, json] = [
      block.text.slice(0, block.text.indexOf('\n')),
      block.text.slice(block.text.indexOf('\n') + 1),
    ];
    expect(summary.length).toBeGreaterThan(10);
    expect(JSON.parse(json)).toStrictEqual(result.structuredContent);
  });

  it("list_visits with companyId is the REST list of the company's visits", async () => {
    const result = await client.callTool({
      name: 'list_visits',
      arguments: { companyId: [companyId, 'co_nobody'] },
    });
    const rest = await getWithKey(
      t.app,
      `/v1/visits?limit=20&companyId=${companyId},co_nobody`,
      tenant.key,
    );
    expect(result.structuredContent).toStrictEqual(rest.body);
    const { data } = result.structuredContent as { data: { id: string; companyId: string }[] };
    expect(data.map((visit) => visit.id)).toEqual(visitIds.slice(0, 2));
    expect(
      (await getWithKey(t.app, `/v1/companies/${companyId}/visits?limit=20`, tenant.key)).body,
    ).toStrictEqual(rest.body);
  });

  it('list_visits pages by the cursor its summary line names, newest first, to the last', async () => {
    const seen: string[] = [];
    let args: Record<string, unknown> = { limit: 1 };
    for (;;) {
      const result = await client.callTool({ name: 'list_visits', arguments: args });
      const [block] = result.content as { text: string }[];
      const page = result.structuredContent as {
        data: { id: string }[];
        hasMore: boolean;
        nextCursor: string | null;
      };
      seen.push(...page.data.map((visit) => visit.id));
      if (!page.hasMore) {
        expect(block.text).toMatch(/^1 visits, newest first\. This is the last page\.\n/);
        break;
      }
      const named = /call list_visits with cursor "([^"]+)" and the same other arguments/.exec(
        block.text,
      );
      expect(named?.[1]).toBe(page.nextCursor);
      args = { limit: 1, cursor: named?.[1] };
    }
    expect(seen).toEqual(visitIds);
  });

  it('get_visit returns the REST visit, whole or with fields', async () => {
    for (const [fields, query] of [
      [undefined, ''],
      [['startedAt', 'pages.path'], '?fields=startedAt,pages.path'],
    ] as const) {
      const result = await client.callTool({
        name: 'get_visit',
        arguments: { id: visitIds[0], ...(fields && { fields }) },
      });
      const rest = await getWithKey(t.app, `/v1/visits/${visitIds[0]}${query}`, tenant.key);
      expect(rest.status).toBe(200);
      expect(result.structuredContent).toStrictEqual(rest.body);
      const [block] = result.content as { text: string }[];
      expect(block.text.startsWith(`The visit ${visitIds[0]}.\n`)).toBe(true);
    }
  });

  it("another workspace's visit is the same error as an id of none, and in no list", async () => {
    const foreign = await client.callTool({
      name: 'get_visit',
      arguments: { id: otherVisitIds[0] },
    });
    const none = await client.callTool({ name: 'get_visit', arguments: { id: 'vi_nobody' } });
    expect(foreign.isError).toBe(true);
    expect(foreign.content).toStrictEqual(none.content);
    expect(JSON.stringify(foreign.content)).toContain(
      'No visit with this id in this workspace. Ids come from list_visits',
    );
    const list = await client.callTool({
      name: 'list_visits',
      arguments: { limit: 50, companyId: [otherCompanyId] },
    });
    expect(list.structuredContent).toMatchObject({ data: [], hasMore: false });
    // A cursor of the other workspace's list is not one of this workspace's.
    const theirs = await getWithKey(t.app, '/v1/visits?limit=1', other.key);
    expect(theirs.body).toMatchObject({ data: [{ id: otherVisitIds[0] }], hasMore: true });
    const foreignCursor = await client.callTool({
      name: 'list_visits',
      arguments: { limit: 1, cursor: (theirs.body as { nextCursor: string }).nextCursor },
    });
    expect(foreignCursor.isError).toBe(true);
    expect(JSON.stringify(foreignCursor.content)).toContain('cursor is not valid');
  });

  it.each([
    [
      'list_visits',
      { since: WEEK_AGO, until: '2020-01-01' },
      `/v1/visits?since=${WEEK_AGO}&until=2020-01-01`,
    ],
    ['list_visits', { page: ['pricing'] }, '/v1/visits?page=pricing'],
    ['list_visits', { companyId: ['x'.repeat(101)] }, `/v1/visits?companyId=${'x'.repeat(101)}`],
    ['list_visits', { cursor: 'not-a-cursor' }, '/v1/visits?cursor=not-a-cursor'],
    ['list_visits', { offset: 20 }, '/v1/visits?offset=20'],
    ['list_visits', { fields: ['pages.colour'] }, '/v1/visits?fields=pages.colour'],
    ['list_companies', { visitedSince: WEEK_AGO }, `/v1/companies?visitedSince=${WEEK_AGO}`],
    ['list_companies', { visitedPage: ['/a', 'b'] }, '/v1/companies?visitedPage=/a,b'],
  ])('%s %j: refused with the REST messages', async (name, args, path) => {
    const result = await client.callTool({ name, arguments: args });
    const rest = await getWithKey(t.app, path, tenant.key);
    expect(rest.status).toBe(400);
    expect(result.isError).toBe(true);
    expect(result.content).toStrictEqual([
      { type: 'text', text: `Invalid arguments: ${(rest.body.message as string[]).join('; ')}` },
    ]);
  });

  it('get_visit refuses what is not an id or fields, and list_visits a page past 50', async () => {
    for (const [name, args, message] of [
      ['get_visit', {}, 'Invalid arguments: id must be a non-empty string'],
      ['get_visit', { id: visitIds[0], since: WEEK_AGO }, 'Invalid arguments: '],
      ['list_visits', { limit: 51 }, 'limit must not be greater than 50'],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain(message);
    }
  });

  it('get_company and get_lead return the REST item', async () => {
    for (const [name, id, path, fields] of [
      ['get_company', companyId, `/v1/companies/${companyId}`, undefined],
      ['get_lead', leadId, `/v1/leads/${leadId}`, undefined],
      [
        'get_company',
        companyId,
        `/v1/companies/${companyId}?fields=name,contacts`,
        ['name', 'contacts'],
      ],
      ['get_lead', leadId, `/v1/leads/${leadId}?fields=status`, ['status']],
    ] as const) {
      const result = await client.callTool({ name, arguments: { id, ...(fields && { fields }) } });
      expect(result.structuredContent).toStrictEqual(
        (await getWithKey(t.app, path, tenant.key)).body,
      );
    }
  });

  it('the next page is named in the summary line', async () => {
    const result = await client.callTool({ name: 'list_companies', arguments: { limit: 1 } });
    const [block] = result.content as { text: string }[];
    expect(block.text).toMatch(/^Companies 1 to 1 of 3.*call list_companies with offset 1/);
  });

  it("another workspace's company is the same error as an id of none", async () => {
    const foreign = await client.callTool({
      name: 'get_company',
      arguments: { id: otherCompanyId },
    });
    const none = await client.callTool({ name: 'get_company', arguments: { id: 'co_nobody' } });
    expect(foreign.isError).toBe(true);
    expect(foreign.content).toStrictEqual(none.content);
    expect(JSON.stringify(foreign)).not.toContain(otherCompanyId);
    const list = await client.callTool({ name: 'list_companies', arguments: { limit: 50 } });
    expect(JSON.stringify(list)).not.toContain(otherCompanyId);
  });

  it('bad arguments and an expired or foreign cursor are errors an agent can act on', async () => {
    const bad = await client.callTool({
      name: 'list_companies',
      arguments: { intentLevel: ['lukewarm'] },
    });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('intentLevel has an unknown value');
    for (const [args, message] of [
      [{ fields: ['name', 'colour'] }, 'fields has an unknown name \\"colour\\"'],
      [{ q: 'ab' }, 'q has an invalid value \\"ab\\"'],
      [{ domain: ['https://acme.example'] }, 'domain has an invalid value'],
    ] as const) {
      const refused = await client.callTool({ name: 'list_companies', arguments: args });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain(message);
    }
    const cursor = await client.callTool({
      name: 'list_company_changes',
      arguments: { cursor: 'not-a-cursor' },
    });
    expect(cursor.isError).toBe(true);
    expect(JSON.stringify(cursor.content)).toContain('cursor is not valid');
    const big = await client.callTool({ name: 'list_companies', arguments: { limit: 51 } });
    expect(big.isError).toBe(true);
  });
});

describe('over raw HTTP', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    },
  };
  const post = (body: unknown, key = tenant.key) =>
    request(t.app.getHttpServer())
      .post('/mcp')
      .set('Authorization', `Bearer ${key}`)
      .set('Accept', 'application/json, text/event-stream')
      .set('Content-Type', 'application/json')
      .send(body as object);

  it('answers a tools/call without a handshake, as JSON', async () => {
    const response = await post({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_workspace', arguments: {} },
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { structuredContent: { id: tenant.workspace.id } },
    });
  });

  it("answers docs/agents.md's curl example as written, and 406 without its Accept", async () => {
    const doc = readFileSync(join(__dirname, '../../..', 'docs', 'agents.md'), 'utf8');
    const block = /```sh\n(curl [^`]*?\/mcp[^`]*?)```/.exec(doc)?.[1] ?? '';
    const url = /curl -s (\S+)/.exec(block)?.[1] ?? '';
    const headers = Object.fromEntries(
      [...block.matchAll(/-H (["'])([^:]+): ([^"']*)\1/g)].map((match) => [
        match[2],
        match[3].replace('$KEY', tenant.key),
      ]),
    );
    const body = /-d '([^']*)'/.exec(block)?.[1] ?? '';
    expect(url).toBe('http://localhost:3000/mcp');
    const send = (sent: Record<string, string>) =>
      fetch(url.replace('http://localhost:3000', baseUrl), {
        method: 'POST',
        headers: sent,
        body,
      });

    const answer = await send(headers);
    expect(answer.status).toBe(200);
    const result = (await answer.json()) as {
      result: { structuredContent: { data: { intentLevel: string }[] } };
    };
    expect(result.result.structuredContent.data.length).toBeGreaterThan(0);
    expect(result.result.structuredContent.data.map((c) => c.intentLevel)).toEqual(
      result.result.structuredContent.data.map(() => 'hot'),
    );
    // What the reader sent: the doc's other headers, JSON alone accepted.
    expect((await send({ ...headers, Accept: 'application/json' })).status).toBe(406);
    // And through curl itself, where there is one: the block as written, with KEY set.
    if (hasCurl()) {
      // Asynchronously: the server answering it is in this process.
      const { stdout } = await promisify(execFile)(
        'bash',
        ['-c', block.replace('http://localhost:3000', baseUrl)],
        { env: { ...process.env, KEY: tenant.key }, encoding: 'utf8' },
      );
      expect(JSON.parse(stdout)).toEqual(expect.objectContaining({ id: 1 }));
    }
  });

  it('answers initialize with the server and its tools capability', async () => {
    const response = await post(initialize);
    expect(response.status).toBe(200);
    expect(response.body.result).toMatchObject({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'visitor-read-api' },
    });
  });

  it('a bad key is the REST 401, with WWW-Authenticate', async () => {
    const response = await post(initialize, 'st_not_a_key');
    const rest = await getWithKey(t.app, '/v1/me', 'st_not_a_key');
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect({ ...response.body, path: undefined, timestamp: undefined }).toStrictEqual({
      ...rest.body,
      path: undefined,
      timestamp: undefined,
    });
  });

  it('a foreign Origin is 403 and runs nothing; the allowed one is served', async () => {
    const foreign = await post(initialize).set('Origin', 'https://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ statusCode: 403, error: 'FORBIDDEN' });
    const allowed = await post(initialize).set('Origin', 'https://app.example.com');
    expect(allowed.status).toBe(200);
  });

  it('GET and DELETE are 405 naming POST', async () => {
    for (const method of ['get', 'delete', 'put'] as const) {
      const response = await request(t.app.getHttpServer())[method]('/mcp');
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('POST');
    }
  });

  it('a body over 64 KiB is refused before it is parsed', async () => {
    const response = await post({ ...initialize, padding: 'x'.repeat(70_000) });
    expect(response.status).toBe(413);
  });

  it('the key never appears in a result, an error, or a log line', async () => {
    const { key } = await createApiKey(t.prisma, tenant.workspace.id);
    const answers = await Promise.all([
      post(initialize, key),
      post(
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'list_companies', arguments: { limit: 1 } },
        },
        key,
      ),
      post(
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope', arguments: {} } },
        key,
      ),
      post(
        {
          jsonrpc: '2.0',
          id: 4,
          method: 'tools/call',
          params: { name: 'list_companies', arguments: { since: key } },
        },
        key,
      ),
    ]);
    for (const answer of answers) expect(answer.text).not.toContain(key);
  });
});

describe('the same per-minute budget as REST', () => {
  it('the 121st mixed call is refused', async () => {
    const limited = await createTestApp();
    try {
      const url = await listening(limited);
      const { key } = await createTenant(limited.prisma);
      // The SDK client's connect is two requests (initialize, then the initialized notification).
      const client = await connect(url, key);
      let mcp = 2;
      let rest = 0;
      while (mcp + rest < 120) {
        // Visits reads among them (a few: the others are the cheapest reads there are): each tool
        // call and each read counts one, whatever it reads.
        const visits = mcp + rest < 6;
        if ((mcp + rest) % 2 === 0) {
          const name = visits ? 'list_visits' : 'get_workspace';
          const result = await client.callTool({ name, arguments: {} });
          expect(result.isError).toBeFalsy();
          mcp++;
        } else {
          const path = visits ? '/v1/visits' : '/v1/me';
          expect((await getWithKey(limited.app, path, key)).status).toBe(200);
          rest++;
        }
      }
      expect((await getWithKey(limited.app, '/v1/me', key)).status).toBe(429);
      await expect(client.callTool({ name: 'get_workspace', arguments: {} })).rejects.toThrow();
      await client.close();
    } finally {
      await limited.close();
    }
  });
});

describe('scopes, the in-flight limit and the log', () => {
  const logLines: string[] = [];
  let limited: TestApp;
  let url: string;

  beforeAll(async () => {
    limited = await createTestApp({
      env: {
        RATE_LIMIT_PER_MINUTE: '1000000',
        MAX_IN_FLIGHT_PER_WORKSPACE: '1',
        LOG_LEVEL: 'debug',
      },
      customize: (builder) => {
        builder
          .overrideProvider(LOG_DESTINATION)
          .useValue({ write: (line: string) => void logLines.push(line) });
      },
    });
    url = await listening(limited);
  });

  afterAll(async () => {
    await limited.close();
  });

  it("a tool outside the key's scopes is an error naming the scope; the others answer", async () => {
    const { workspace } = await createTenant(limited.prisma);
    const { key } = await createApiKey(limited.prisma, workspace.id, { scopes: ['leads:read'] });
    const client = await connect(url, key);
    const companies = await client.callTool({ name: 'list_companies', arguments: {} });
    expect(companies.isError).toBe(true);
    expect(JSON.stringify(companies.content)).toContain('This key lacks the scope companies:read');
    const feed = await client.callTool({ name: 'list_lead_changes', arguments: {} });
    expect(JSON.stringify(feed.content)).toContain('This key lacks the scope changes:read');
    const leads = await client.callTool({ name: 'list_leads', arguments: {} });
    expect(leads.isError).toBeFalsy();
    await client.close();
  });

  it('the visits tools and visitedPage need visits:read, as their REST reads do', async () => {
    const { workspace } = await createTenant(limited.prisma);
    const company = await createCompany(limited.prisma, workspace.id);
    const { visit } = await createVisit(limited.prisma, company, {
      pages: [{ path: '/' }, { path: '/pricing' }],
    });
    const lacking = await createApiKey(limited.prisma, workspace.id, {
      scopes: ['companies:read'],
    });
    const reading = await createApiKey(limited.prisma, workspace.id, { scopes: ['visits:read'] });
    const both = await createApiKey(limited.prisma, workspace.id, {
      scopes: ['companies:read', 'visits:read'],
    });
    const calls = [
      ['list_visits', {}, `/v1/visits`],
      ['get_visit', { id: visit.id }, `/v1/visits/${visit.id}`],
      ['list_companies', { visitedPage: ['/pricing'] }, '/v1/companies?visitedPage=/pricing'],
    ] as const;
    const lackingClient = await connect(url, lacking.key);
    for (const [name, args, path] of calls) {
      const refused = await lackingClient.callTool({ name, arguments: args });
      expect(refused.isError).toBe(true);
      expect(refused.content).toStrictEqual([
        { type: 'text', text: 'This key lacks the scope visits:read: ask for a key that has it.' },
      ]);
      expect((await getWithKey(limited.app, path, lacking.key)).status).toBe(403);
    }
    const plain = await lackingClient.callTool({ name: 'list_companies', arguments: {} });
    expect(plain.isError).toBeFalsy();
    await lackingClient.close();
    const readingClient = await connect(url, reading.key);
    const visits = await readingClient.callTool({ name: 'list_visits', arguments: {} });
    expect(visits.structuredContent).toMatchObject({ data: [{ id: visit.id }] });
    const one = await readingClient.callTool({ name: 'get_visit', arguments: { id: visit.id } });
    expect(one.structuredContent).toMatchObject({ id: visit.id });
    await readingClient.close();
    const bothClient = await connect(url, both.key);
    const visited = await bothClient.callTool({
      name: 'list_companies',
      arguments: { visitedPage: ['/pricing'] },
    });
    expect(visited.structuredContent).toMatchObject({ total: 1, data: [{ id: company.id }] });
    await bothClient.close();
  });

  it("a workspace's REST request in progress counts against its MCP calls (429), and back", async () => {
    const { workspace, key } = await createTenant(limited.prisma);
    const client = await connect(url, key);
    const locker = new PgClient({ connectionString: limited.database.directUrl });
    await locker.connect();
    try {
      // The one request in progress: a list that waits on a lock of the companies table.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE companies IN ACCESS EXCLUSIVE MODE');
      const held = getWithKey(limited.app, '/v1/companies', key).then((response) => response);
      await waitForLockWaiter(locker);
      await expect(client.callTool({ name: 'get_workspace', arguments: {} })).rejects.toThrow(
        /429/,
      );
      await locker.query('COMMIT');
      expect((await held).status).toBe(200);
      const after = await client.callTool({ name: 'get_workspace', arguments: {} });
      expect(after.structuredContent).toMatchObject({ id: workspace.id });
    } finally {
      await locker.end();
      await client.close();
    }
  });

  it('the key is in no log line, whatever the call', async () => {
    const { key } = await createTenant(limited.prisma);
    const client = await connect(url, key);
    await client.callTool({ name: 'list_companies', arguments: { since: key } });
    await client.callTool({ name: 'get_company', arguments: { id: key } });
    await client.callTool({ name: 'nope', arguments: {} });
    await client.close();
    expect(logLines.length).toBeGreaterThan(3);
    expect(logLines.join('\n')).not.toContain(key);
  });
});
