import { Client } from 'pg';
import { hashApiKey } from '../src/auth/api-key';
import { API_KEY_BY_HASH_SQL } from '../src/auth/api-keys.sql';
import { COMPANY_CHANGES_SQL, COMPANY_LIST } from '../src/companies/companies.sql';
import { LEAD_LIST } from '../src/leads/leads.sql';
import { COMPANY_SELECTABLE } from '../src/companies/company.fields';
import type { Selectable } from '../src/items/field-selection';
import { LEAD_SELECTABLE } from '../src/leads/lead.fields';
import { DATA_VERSION_STATEMENT } from '../src/items/item-sql';
import { weakEtag } from '../src/http/conditional-requests';
import type { ListStatements } from '../src/items/list-page';
import { listStatement } from './list-statement';
import { type LookupValues, lookupDomains, lookupTexts } from './lookups';
import { LARGE_WORKSPACE_ID, smallWorkspaceId } from './data';
import { companyFeedPosition, type FeedPosition } from './feeds';
import { FEED_LIMIT, cursors, now, scale, secret } from './run-settings';
import { withClient } from './with-client';
import { VISIT_WORKLOADS } from './visit-workloads';
import { FRAMEWORK_ALONE, ON_OLDER_NODE, SERVERS, WITH_METRICS } from './servers';
import {
  type WorkloadTarget,
  fasterThan,
  latencyAgainst,
  latencyAgainstWorkload,
  latencyAtMost,
  throughputAgainst,
  throughputAgainstWorkload,
} from './targets';
import type {
  Request,
  SqlValue,
  VisitCases,
  WorkloadContext,
  WorkloadDeclaration,
} from './workload';

/*
 * The workloads, declared as data (WORKLOADS): what each requests, its statements for pgbench,
 * and its targets; and what their requests are made of once the run's data exists.
 */

/** A feed page of workloads g1-g3: after which change it starts, and what it must hold. */
interface FeedPageCase {
  id: string;
  /** The cursor's position; none for the first page. */
  after?: FeedPosition;
  firstId: string;
  hasMore: boolean;
}

/** The first page, the page after the middle change and the last full page of the large feed. */
export async function locateFeedPages(url: string): Promise<FeedPageCase[]> {
  const n = scale.largeCompanies;
  return withClient(url, async (client) => {
    const at = (i: number) => companyFeedPosition(client, LARGE_WORKSPACE_ID, i);
    return [
      { id: 'g1', firstId: (await at(1)).id, hasMore: true },
      { id: 'g2', after: await at(n / 2), firstId: (await at(n / 2 + 1)).id, hasMore: true },
      {
        id: 'g3',
        after: await at(n - FEED_LIMIT),
        firstId: (await at(n - FEED_LIMIT + 1)).id,
        hasMore: false,
      },
    ];
  });
}

/** The request of a page of the large workspace's companies feed after a position. */
export function feedPath(after: FeedPosition | undefined): string {
  const query = new URLSearchParams({ limit: String(FEED_LIMIT) });
  if (after) query.set('cursor', cursors.encode('companies', LARGE_WORKSPACE_ID, after));
  return `/v1/companies/changes?${query.toString()}`;
}

/** The page of workloads r and r304, with the ETag the service gives it (its data version's). */
const REVALIDATED_PATH = '/v1/companies?limit=200';

export async function revalidatedPage(url: string): Promise<{ path: string; etag: string }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const workspace = smallWorkspaceId(1);
    const { rows } = await client.query<{ version: string }>(DATA_VERSION_STATEMENT, [workspace]);
    const etag = weakEtag(workspace, REVALIDATED_PATH, `version:${rows[0].version}`);
    return { path: REVALIDATED_PATH, etag };
  } finally {
    await client.end();
  }
}

/** The four top-level fields of workload (a4) (and the id, always). */
export const LIST_FIELDS_QUERY = 'fields=name,domain,intentScore,lastSeen';

const count = (i: number) => i.toLocaleString('en');
const ago = (hours: number) => new Date(now.getTime() - hours * 3_600_000).toISOString();
const companies = (request: Request, context: WorkloadContext) => context.companies(request);
// Every workload of small workspaces draws one at random per request.
const eachSmall = (path: string) => (context: WorkloadContext) =>
  context.small.map((workspace) => ({ path, key: context.keyOf(workspace) }));
const onLarge = (path: string) => (context: WorkloadContext) => [{ path, key: context.large }];
const shippedNode: WorkloadTarget = {
  ...throughputAgainst('service-older-node', 1),
  says: 'shipped Node >= older Node (throughput)',
};
const pageOneCost: WorkloadTarget = {
  ...latencyAgainstWorkload('p50', 'a', 2),
  says: 'page one cost, 1M vs 5k companies (p50) <= 2x',
};

/** The deep pages of the large workspace: one offset each (a mix has no meaningful median). */
function deepPage(
  id: string,
  title: string,
  offset: number,
  targets: WorkloadTarget[],
  clients?: number,
): WorkloadDeclaration {
  return {
    id,
    title: `${title} (offset ${offset}, limit=200)`,
    requests: onLarge(`/v1/companies?limit=200&offset=${offset}`),
    connections: clients,
    statements: companies,
    targets: [...targets, fasterThan('naive', 5)],
  };
}

/**
 * A page of the large workspace's companies feed, one client, on the service and the bare
 * server (the naive server's companies service is its list alone); its p50 against the bare
 * server's, which carries the same 1.1 MB body through node-postgres and HTTP (43 to 65 ms on
 * two cores, where an absolute 60 ms was missed by the bare server itself).
 */
function feedPage(id: string, title: string, targets: WorkloadTarget[] = []): WorkloadDeclaration {
  return {
    id,
    title: `companies feed of the large workspace, ${title}, limit=${FEED_LIMIT}, one client`,
    requests: (context) => [{ path: feedPath(context.feedPages.get(id)), key: context.large }],
    connections: 1,
    servers: ['service', 'bare'],
    // The key lookup, then the feed's one statement after the position (none: from the start),
    // with the position's pass (null: this read starts it).
    statements: (_request, context) => {
      const after = context.feedPages.get(id);
      return [
        context.keyLookup(context.large),
        [
          COMPANY_CHANGES_SQL,
          [
            LARGE_WORKSPACE_ID,
            after?.txid ?? '0',
            after?.id ?? '',
            FEED_LIMIT,
            after?.pass ?? null,
          ],
        ],
      ];
    },
    targets: [latencyAgainst('p50', 'bare', 1.5), ...targets],
  };
}

/** A filter of the large workspace's companies (docs/api.md, "Filters"): the naive server has none. */
function filtered(
  id: string,
  title: string,
  query: string,
  targets: WorkloadTarget[] = [],
): WorkloadDeclaration {
  return {
    id,
    title: `${title} (${decodeURIComponent(query)})`,
    requests: onLarge(`/v1/companies?${query}`),
    // With `since`, a filtered total counts the matching rows (docs/api.md, "Filters"): one
    // client, like (c1); ten counting at once would mostly measure the two cores' queue.
    connections: query.includes('since=') ? 1 : undefined,
    servers: ['service', 'bare'],
    statements: companies,
    targets,
  };
}

const FEED_SPREAD: WorkloadTarget = {
  says: 'slowest/fastest feed page of g1–g3, p50 <= 1.5x',
  figure: (m) => {
    const p50s = ['g1', 'g2', 'g3'].map((id) => m.of('service', id)?.p50);
    if (p50s.some((p50) => p50 === undefined)) return undefined;
    return Math.max(...(p50s as number[])) / Math.min(...(p50s as number[]));
  },
  atMost: 1.5,
  unit: 'x',
};

/**
 * The request workloads, each with its targets: adding one is one entry here. The special
 * measurements ((h), (s), (i), (w), (n), (t), (x), (q)) are run.ts's, their targets beside them.
 */
export const WORKLOADS: WorkloadDeclaration[] = [
  {
    id: 'a',
    title: 'page one of companies, limit=50, random small workspaces',
    requests: eachSmall('/v1/companies?limit=50'),
    servers: [...SERVERS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE],
    statements: companies,
    targets: [throughputAgainst('bare', 0.9), latencyAgainst('p99', 'bare', 1.3), shippedNode],
  },
  {
    // Workload (a) asking for four fields (docs/api.md, "Choosing the fields"): the naive server
    // has no `fields`.
    id: 'a4',
    title: `workload (a) with four fields: ${LIST_FIELDS_QUERY}`,
    requests: eachSmall(`/v1/companies?limit=50&${LIST_FIELDS_QUERY}`),
    servers: ['service', 'bare'],
    statements: companies,
    targets: [
      throughputAgainstWorkload('a', 1.5, 'service'),
      throughputAgainstWorkload('a', 1.5, 'bare'),
    ],
  },
  {
    id: 'b',
    title: 'full sync of small workspaces: every offset, limit=200',
    requests: syncRequests,
    statements: companies,
  },
  {
    // (b) compressed: the service only (the others do not compress), no pgbench (the same SQL).
    id: 'b-br',
    title: 'workload (b) asking for compression: Accept-Encoding: gzip, br (br sent)',
    requests: syncRequests,
    headers: { 'accept-encoding': 'gzip, br' },
    servers: ['service'],
    statements: () => [],
  },
  // Ten middle deep pages at once queue on the database's two cores (the database alone takes
  // 350 ms): against the database alone, so that a miss is the service's.
  deepPage('c', 'the middle deep page of the large workspace', scale.largeCompanies / 2, [
    latencyAgainst('p50', 'pgbench', 1.2),
  ]),
  deepPage('c2', 'the last page of the large workspace', scale.largeCompanies - 200, [
    latencyAtMost('p50', 150),
  ]),
  deepPage(
    'c1',
    'the middle deep page, one client (a sync job alone)',
    scale.largeCompanies / 2,
    [latencyAtMost('p50', 150)],
    1,
  ),
  feedPage('g1', 'the first page (no cursor)', [FEED_SPREAD]),
  feedPage('g2', `a middle page (cursor at the ${count(scale.largeCompanies / 2)}th change)`),
  feedPage(
    'g3',
    `the last page (cursor at the ${count(scale.largeCompanies - FEED_LIMIT)}th change of ` +
      `${count(scale.largeCompanies)})`,
  ),
  {
    id: 'd0',
    title: 'page one of the large workspace, limit=50, no filter',
    requests: onLarge('/v1/companies?limit=50'),
    statements: companies,
    targets: [pageOneCost],
  },
  {
    id: 'd',
    title: 'since filters on the large workspace (1 h, 1 day, 7, 30, 365 days), limit=50',
    requests: (context) =>
      [1, 24, 24 * 7, 24 * 30, 24 * 365].map((hours) => ({
        path: `/v1/companies?limit=50&since=${encodeURIComponent(ago(hours))}`,
        key: context.large,
      })),
    statements: companies,
    targets: [pageOneCost],
  },
  // `crmStatus=new` matches about 45 % of the companies; "hot, not yet in the CRM" about 10 %.
  filtered(
    'k',
    'hot companies not yet in the CRM, page one',
    'intentLevel=hot&crmStatus=new,qualified&limit=50',
  ),
  filtered(
    'k1',
    'one country above a score, page one',
    'country=France&minIntentScore=40&limit=50',
  ),
  filtered(
    'k2',
    'the middle deep page of crmStatus=new (45 % of the companies)',
    `crmStatus=new&limit=200&offset=${Math.round(scale.largeCompanies * 0.45 * 0.5)}`,
  ),
  filtered(
    'k3',
    'crmStatus=new, since 30 days, page one',
    `crmStatus=new&since=${encodeURIComponent(ago(24 * 30))}&limit=50`,
    [latencyAgainstWorkload('p50', 'd', 3)],
  ),
  // The lookups (docs/api.md, "Lookups"): (l) at the run's concurrency, against the database
  // alone at the same (a domain is under a millisecond of it, which 10 clients on two cores make
  // 4 to 6 ms: the rest is the list path's); (l1) one client, its total counting the matches, as
  // (k3)'s does.
  {
    id: 'l',
    title: (context) =>
      `domain= lookups on the large workspace, one domain each (${lookupDomains(context.lookups).length} domains, as stored or otherwise written, a quarter of none), limit=50`,
    requests: (context) =>
      lookupDomains(context.lookups).map((domain) => ({
        path: `/v1/companies?domain=${encodeURIComponent(domain)}&limit=50`,
        key: context.large,
      })),
    servers: ['service', 'bare'],
    statements: companies,
    targets: [latencyAgainst('p50', 'pgbench', 2), latencyAtMost('p99', 20)],
  },
  {
    id: 'l1',
    title: (context) =>
      `q= on the large workspace, 3 to 10 characters, matching and not (${lookupTexts(
        context.lookups,
      )
        .map((text) => JSON.stringify(text))
        .join(', ')}), limit=50, one client`,
    requests: (context) =>
      lookupTexts(context.lookups).map((text) => ({
        path: `/v1/companies?q=${encodeURIComponent(text)}&limit=50`,
        key: context.large,
      })),
    connections: 1,
    servers: ['service', 'bare'],
    statements: companies,
    targets: [latencyAtMost('p50', 50)],
  },
  // A 200-item page, then the same asked with its ETag (docs/api.md, "Conditional requests"):
  // the 304 reads the data version alone, not the page.
  {
    id: 'r',
    title: `a 200-item page of one small workspace (${REVALIDATED_PATH}), the baseline of r304`,
    requests: (context) => [
      { path: context.revalidated.path, key: context.keyOf(smallWorkspaceId(1)) },
    ],
    servers: ['service'],
    statements: companies,
  },
  {
    id: 'r304',
    title: 'the same page with If-None-Match: its ETag (answered 304, no body)',
    requests: (context) => [
      { path: context.revalidated.path, key: context.keyOf(smallWorkspaceId(1)) },
    ],
    headers: (context) => ({ 'if-none-match': context.revalidated.etag }),
    servers: ['service'],
    statements: ({ key }, context) => [
      context.keyLookup(key),
      [DATA_VERSION_STATEMENT, [smallWorkspaceId(1)]],
    ],
    expectedStatus: 304,
  },
  // The MCP endpoint (docs/agents.md) beside the REST list it wraps, the same pages: the cost
  // of the protocol (a server per request, JSON-RPC, the text block) as a ratio of the two.
  {
    id: 'm0',
    title: 'page one of companies, limit=20, random small workspaces (the baseline of m)',
    requests: eachSmall('/v1/companies?limit=20'),
    servers: ['service'],
    statements: companies,
  },
  {
    id: 'm',
    title: 'MCP tools/call list_companies {limit: 20}, random small workspaces',
    requests: (context) =>
      context.small.map((workspace) => ({
        path: '/mcp',
        key: context.keyOf(workspace),
        body: toolCall('list_companies', { limit: 20 }),
      })),
    servers: ['service'],
    statements: () => [],
  },
  {
    // The cost of the framework alone, with no database and no key (the bare server answers any
    // /health path).
    id: 'z',
    title: 'the framework alone: GET /health/live (no key, no database)',
    requests: onLarge('/health/live'),
    servers: [...WITH_METRICS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE],
    statements: () => [],
    targets: [throughputAgainst('bare', 0.4), shippedNode],
  },
  {
    id: 'e',
    title: 'GET /v1/me, random keys',
    requests: (context) => context.everyKey.map((key) => ({ path: '/v1/me', key })),
    servers: [...WITH_METRICS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE],
    statements: ({ key }, context) => [context.keyLookup(key)],
    targets: [throughputAgainst('bare', 0.9), latencyAgainst('p99', 'bare', 1.5), shippedNode],
  },
  {
    id: 'f',
    title: 'page one of leads, limit=50, random small workspaces',
    requests: eachSmall('/v1/leads?limit=50'),
    servers: [...SERVERS, ...FRAMEWORK_ALONE],
    statements: (request, context) => context.leads(request),
    targets: [throughputAgainst('bare', 0.85)],
  },
  ...VISIT_WORKLOADS,
];

/** (b)'s requests: every offset of every small workspace, by pages of 200. */
function syncRequests(context: WorkloadContext): Request[] {
  return context.small.flatMap((workspace) =>
    Array.from({ length: Math.ceil(scale.smallCompanies / 200) }, (_, page) => ({
      path: `/v1/companies?limit=200&offset=${page * 200}`,
      key: context.keyOf(workspace),
    })),
  );
}

/** What the workloads' requests are made of, once the data and its keys exist. */
export function workloadContext(
  keys: Map<string, string>,
  feedPages: FeedPageCase[],
  revalidated: { path: string; etag: string },
  lookups: LookupValues,
  visits: VisitCases,
): WorkloadContext {
  const keyOf = (workspace: string): string => {
    const key = keys.get(workspace);
    if (!key) throw new Error(`no key for ${workspace}`);
    return key;
  };
  const workspaceOfKey = new Map([...keys].map(([workspace, key]) => [key, workspace]));
  const keyLookup = (key: string): [string, SqlValue[]] => [
    API_KEY_BY_HASH_SQL,
    [[hashApiKey(key, secret)]],
  ];
  // A list request's statements: the key lookup, then the list's one statement.
  const list =
    (statements: ListStatements, selectable: Selectable) =>
    ({ path, key }: Request): [string, SqlValue[]][] => {
      const query = new URL(path, 'http://bench').searchParams;
      const workspace = workspaceOfKey.get(key) ?? '';
      const [sql, values] = listStatement(statements, selectable, workspace, query);
      return [keyLookup(key), [sql, values as SqlValue[]]];
    };
  return {
    keyOf,
    everyKey: [...keys.values()],
    small: Array.from({ length: scale.smallWorkspaces }, (_, i) => smallWorkspaceId(i + 1)),
    large: keyOf(LARGE_WORKSPACE_ID),
    companies: list(COMPANY_LIST, COMPANY_SELECTABLE),
    leads: list(LEAD_LIST, LEAD_SELECTABLE),
    keyLookup,
    feedPages: new Map(feedPages.map(({ id, after }) => [id, after])),
    revalidated,
    lookups,
    visits,
  };
}

/** A `tools/call` as a 2025-era client sends it after its handshake (stateless: none needed). */
function toolCall(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args },
  });
}
