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
import { type LookupValues, lookupWorkloads } from './lookups';
import { LARGE_WORKSPACE_ID, smallWorkspaceId } from './data';
import { companyFeedPosition, feedSync, offsetSync, type FeedPosition } from './feeds';
import { type Report, type ServerName } from './report';
import {
  FEED_LIMIT,
  LIST_LIMIT,
  Request,
  SqlValue,
  Workload,
  cursors,
  log,
  now,
  scale,
  secret,
} from './run-settings';
import { withClient } from './setup';
import { FRAMEWORK_ALONE, ON_OLDER_NODE, SERVERS, WITH_METRICS } from './servers';

/*
 * The workloads: what each one requests, and the statements of each request for pgbench.
 */

/** A feed page of workloads g1-g3: after which change it starts, and what it must hold. */
interface FeedPageCase {
  id: string;
  title: string;
  /** The cursor's position; none for the first page. */
  after?: FeedPosition;
  firstId: string;
  hasMore: boolean;
}

/** The first page, the page after the middle change and the last full page of the large feed. */
export async function locateFeedPages(url: string): Promise<FeedPageCase[]> {
  const n = scale.largeCompanies;
  const count = (i: number) => i.toLocaleString('en');
  return withClient(url, async (client) => {
    const at = (i: number) => companyFeedPosition(client, LARGE_WORKSPACE_ID, i);
    return [
      { id: 'g1', title: 'the first page (no cursor)', firstId: (await at(1)).id, hasMore: true },
      {
        id: 'g2',
        title: `a middle page (cursor at the ${count(n / 2)}th change)`,
        after: await at(n / 2),
        firstId: (await at(n / 2 + 1)).id,
        hasMore: true,
      },
      {
        id: 'g3',
        title: `the last page (cursor at the ${count(n - FEED_LIMIT)}th change of ${count(n)})`,
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

export function defineWorkloads(
  keys: Map<string, string>,
  feedPages: FeedPageCase[],
  revalidated: { path: string; etag: string },
  lookups: LookupValues,
): Workload[] {
  const keyOf = (workspace: string): string => {
    const key = keys.get(workspace);
    if (!key) throw new Error(`no key for ${workspace}`);
    return key;
  };
  const small = Array.from({ length: scale.smallWorkspaces }, (_, i) => smallWorkspaceId(i + 1));
  const large = keyOf(LARGE_WORKSPACE_ID);
  const hashOf = (key: string) => hashApiKey(key, secret);
  const workspaceOfKey = new Map([...keys].map(([workspace, key]) => [key, workspace]));
  // A list request's statements: the key lookup, then the list's one statement.
  const list =
    (statements: ListStatements, selectable: Selectable) =>
    ({ path, key }: Request): [string, SqlValue[]][] => {
      const query = new URL(path, 'http://bench').searchParams;
      const [sql, values] = listStatement(
        statements,
        selectable,
        workspaceOfKey.get(key) ?? '',
        query,
      );
      return [
        [API_KEY_BY_HASH_SQL, [[hashOf(key)]]],
        [sql, values],
      ];
    };
  const companies = list(COMPANY_LIST, COMPANY_SELECTABLE);
  // A feed page's statements: the key lookup, then the feed's one statement after the position
  // (none: from the start), with the position's pass (null: this read starts it).
  const feed = (after: FeedPosition | undefined) => (): [string, SqlValue[]][] => [
    [API_KEY_BY_HASH_SQL, [[hashOf(large)]]],
    [
      COMPANY_CHANGES_SQL,
      [LARGE_WORKSPACE_ID, after?.txid ?? '0', after?.id ?? '', FEED_LIMIT, after?.pass ?? null],
    ],
  ];
  const sync: Request[] = [];
  for (const workspace of small) {
    for (let offset = 0; offset < scale.smallCompanies; offset += 200) {
      sync.push({ path: `/v1/companies?limit=200&offset=${offset}`, key: keyOf(workspace) });
    }
  }
  const ago = (hours: number) => new Date(now.getTime() - hours * 3_600_000).toISOString();
  return [
    {
      id: 'a',
      title: 'page one of companies, limit=50, random small workspaces',
      requests: small.map((w) => ({ path: '/v1/companies?limit=50', key: keyOf(w) })),
      servers: [...SERVERS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE],
      statements: companies,
    },
    {
      // Workload (a) asking for four fields (docs/api.md, "Choosing the fields"): the naive server
      // has no `fields`.
      id: 'a4',
      title: `workload (a) with four fields: ${LIST_FIELDS_QUERY}`,
      requests: small.map((w) => ({
        path: `/v1/companies?limit=50&${LIST_FIELDS_QUERY}`,
        key: keyOf(w),
      })),
      servers: ['service', 'bare'],
      statements: companies,
    },
    {
      id: 'b',
      title: 'full sync of small workspaces: every offset, limit=200',
      requests: sync,
      statements: companies,
    },
    {
      // (b) compressed: the service only (the others do not compress), no pgbench (the same SQL).
      id: 'b-br',
      title: 'workload (b) asking for compression: Accept-Encoding: gzip, br (br sent)',
      requests: sync,
      headers: { 'accept-encoding': 'gzip, br' },
      servers: ['service'],
      statements: () => [],
    },
    // One offset per workload: a mix of a slow and a fast page has no meaningful median.
    ...(
      [
        ['c', 'the middle deep page of the large workspace', scale.largeCompanies / 2, undefined],
        ['c2', 'the last page of the large workspace', scale.largeCompanies - 200, undefined],
        ['c1', 'the middle deep page, one client (a sync job alone)', scale.largeCompanies / 2, 1],
      ] as const
    ).map(([id, title, offset, clients]) => ({
      id,
      title: `${title} (offset ${offset}, limit=200)`,
      requests: [{ path: `/v1/companies?limit=200&offset=${offset}`, key: large }],
      connections: clients,
      statements: companies,
    })),
    // Service and bare only: the naive server replaces the companies service by its list alone.
    ...feedPages.map(({ id, title, after }) => ({
      id,
      title: `companies feed of the large workspace, ${title}, limit=${FEED_LIMIT}, one client`,
      requests: [{ path: feedPath(after), key: large }],
      connections: 1,
      servers: ['service', 'bare'] satisfies ServerName[],
      statements: feed(after),
    })),
    {
      id: 'd0',
      title: 'page one of the large workspace, limit=50, no filter',
      requests: [{ path: '/v1/companies?limit=50', key: large }],
      statements: companies,
    },
    {
      id: 'd',
      title: 'since filters on the large workspace (1 h, 1 day, 7, 30, 365 days), limit=50',
      requests: [1, 24, 24 * 7, 24 * 30, 24 * 365].map((hours) => ({
        path: `/v1/companies?limit=50&since=${encodeURIComponent(ago(hours))}`,
        key: large,
      })),
      statements: companies,
    },
    // Filters on the large workspace (docs/api.md, "Filters"): the naive server has none.
    // `crmStatus=new` matches about 45 % of the companies; "hot, not yet in the CRM" about 10 %.
    ...(
      [
        [
          'k',
          'hot companies not yet in the CRM, page one',
          'intentLevel=hot&crmStatus=new,qualified&limit=50',
        ],
        ['k1', 'one country above a score, page one', 'country=France&minIntentScore=40&limit=50'],
        [
          'k2',
          'the middle deep page of crmStatus=new (45 % of the companies)',
          `crmStatus=new&limit=200&offset=${Math.round(scale.largeCompanies * 0.45 * 0.5)}`,
        ],
        [
          'k3',
          'crmStatus=new, since 30 days, page one',
          `crmStatus=new&since=${encodeURIComponent(ago(24 * 30))}&limit=50`,
        ],
      ] as const
    ).map(([id, title, query]) => ({
      id,
      title: `${title} (${decodeURIComponent(query)})`,
      requests: [{ path: `/v1/companies?${query}`, key: large }],
      // With `since`, a filtered total counts the matching rows (docs/api.md, "Filters"): one
      // client, like (c1); ten counting at once would mostly measure the two cores' queue.
      connections: query.includes('since=') ? 1 : undefined,
      servers: ['service', 'bare'] satisfies ServerName[],
      statements: companies,
    })),
    ...lookupWorkloads(lookups, large, companies),
    // A 200-item page, then the same asked with its ETag (docs/api.md, "Conditional requests"):
    // the 304 reads the data version alone, not the page.
    {
      id: 'r',
      title: `a 200-item page of one small workspace (${revalidated.path}), the baseline of r304`,
      requests: [{ path: revalidated.path, key: keyOf(smallWorkspaceId(1)) }],
      servers: ['service'],
      statements: companies,
    },
    {
      id: 'r304',
      title: 'the same page with If-None-Match: its ETag (answered 304, no body)',
      requests: [{ path: revalidated.path, key: keyOf(smallWorkspaceId(1)) }],
      headers: { 'if-none-match': revalidated.etag },
      servers: ['service'],
      statements: ({ key }) => [
        [API_KEY_BY_HASH_SQL, [[hashOf(key)]]],
        [DATA_VERSION_STATEMENT, [smallWorkspaceId(1)]],
      ],
      expectedStatus: 304,
    },
    // The MCP endpoint (docs/agents.md) beside the REST list it wraps, the same pages: the cost
    // of the protocol (a server per request, JSON-RPC, the text block) as a ratio of the two.
    {
      id: 'm0',
      title: 'page one of companies, limit=20, random small workspaces (the baseline of m)',
      requests: small.map((w) => ({ path: '/v1/companies?limit=20', key: keyOf(w) })),
      servers: ['service'],
      statements: companies,
    },
    {
      id: 'm',
      title: 'MCP tools/call list_companies {limit: 20}, random small workspaces',
      requests: small.map((w) => ({
        path: '/mcp',
        key: keyOf(w),
        body: toolCall('list_companies', { limit: 20 }),
      })),
      servers: ['service'],
      statements: () => [],
    },
    {
      // Not a workload of the issue: the cost of the framework alone, with no database and no
      // key (the bare server answers any /health path).
      id: 'z',
      title: 'the framework alone: GET /health/live (no key, no database)',
      requests: [{ path: '/health/live', key: large }],
      servers: [...WITH_METRICS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE],
      statements: () => [],
    },
    {
      id: 'e',
      title: 'GET /v1/me, random keys',
      requests: [...keys.values()].map((key) => ({ path: '/v1/me', key })),
      servers: [...WITH_METRICS, ...ON_OLDER_NODE, ...FRAMEWORK_ALONE],
      statements: (request) => [[API_KEY_BY_HASH_SQL, [[hashOf(request.key)]]]],
    },
    {
      id: 'f',
      title: 'page one of leads, limit=50, random small workspaces',
      requests: small.map((w) => ({ path: '/v1/leads?limit=50', key: keyOf(w) })),
      servers: [...SERVERS, ...FRAMEWORK_ALONE],
      statements: list(LEAD_LIST, LEAD_SELECTABLE),
    },
  ];
}

// What an MCP client sends with each POST (Streamable HTTP).
export const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A `tools/call` as a 2025-era client sends it after its handshake (stateless: none needed). */
function toolCall(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args },
  });
}

export function randomIndex(length: number): number {
  return Math.floor(Math.random() * length);
}

/** The levels of gzip and brotli on workload (b)'s first page, as the service writes it. */

/**
 * A new client's full initial sync of the large workspace, one request at a time: through the
 * feed, then by offsets on the list. Each pass must see every company.
 */
export async function measureSync(
  service: string,
  key: string,
): Promise<NonNullable<Report['sync']>> {
  const feed = await feedSync(service, key, FEED_LIMIT);
  log(`sync through the feed: ${feed.requests} pages, ${feed.seconds.toFixed(1)} s`);
  const offset = await offsetSync(service, key, LIST_LIMIT);
  log(`sync by offsets: ${offset.requests} pages, ${offset.seconds.toFixed(1)} s`);
  for (const [name, pass] of [
    ['feed', feed],
    ['offset', offset],
  ] as const) {
    if (pass.distinct !== scale.largeCompanies) {
      throw new Error(
        `the ${name} sync saw ${pass.distinct} distinct companies, not ${scale.largeCompanies}`,
      );
    }
  }
  return { feedLimit: FEED_LIMIT, offsetLimit: LIST_LIMIT, feed, offset };
}
