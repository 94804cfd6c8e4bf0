import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import request from 'supertest';
import { LOG_DESTINATION } from '../src/logging/logging.module';
import { createTestApp, listening, type TestApp } from './support/app';
import { waitForLockWaiter } from './support/database';
import { createApiKey, createCompany, createContact, createLead } from './support/factories';
import { createTenant, getWithKey } from './support/http';

/*
 * POST /mcp with the MCP SDK's own client (docs/agents.md): the tools, their schemas and
 * annotations; each tool's structuredContent equal to the REST body for the same key and
 * parameters; isolation; the same 401, the same per-minute budget; Origin; both protocol eras.
 */

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
  otherCompanyId = (await createCompany(t.prisma, other.workspace.id, { intentScore: 99 })).id;
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

  it('lists the seven read-only tools with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'get_company',
      'get_lead',
      'get_workspace',
      'list_companies',
      'list_company_changes',
      'list_lead_changes',
      'list_leads',
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
      'fields',
    ]);
    expect(tools.find((tool) => tool.name === 'get_company')?.inputSchema.required).toEqual(['id']);
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
    ['list_company_changes', { limit: 2 }, '/v1/companies/changes?limit=2'],
    ['list_lead_changes', { limit: 50 }, '/v1/leads/changes?limit=50'],
  ])('%s %j: structuredContent is the REST body', async (name, args, path) => {
    const result = await client.callTool({ name, arguments: args });
    const rest = await getWithKey(t.app, path, tenant.key);
    expect(rest.status).toBe(200);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toStrictEqual(rest.body);
    // One text block: a summary line, then the same JSON.
    const [block] = result.content as { type: string; text: string }[];
    const [summary, json] = [
      block.text.slice(0, block.text.indexOf('\n')),
      block.text.slice(block.text.indexOf('\n') + 1),
    ];
    expect(summary.length).toBeGreaterThan(10);
    expect(JSON.parse(json)).toStrictEqual(rest.body);
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
    const doc = readFileSync(join(__dirname, '..', 'docs', 'agents.md'), 'utf8');
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
        if ((mcp + rest) % 2 === 0) {
          const result = await client.callTool({ name: 'get_workspace', arguments: {} });
          expect(result.isError).toBeFalsy();
          mcp++;
        } else {
          expect((await getWithKey(limited.app, '/v1/me', key)).status).toBe(200);
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
