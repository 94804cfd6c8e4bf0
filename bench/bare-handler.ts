import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool, type QueryResultRow } from 'pg';
import { hashApiKey, isWellFormedApiKey } from '../src/auth/api-key';
import { API_KEY_BY_HASH_SQL, type ApiKeyRow } from '../src/auth/api-keys.sql';
import { ChangeCursors } from '../src/changes/change-cursor';
import { SignedCursors } from '../src/items/signed-cursors';
import { ChangeFeedPages } from '../src/changes/change-feed';
import type { Feed } from '../src/changes/change-feed-sql';
import { COMPANY_CHANGES_SQL, COMPANY_LIST } from '../src/companies/companies.sql';
import type { Environment } from '../src/config/environment';
import { LEAD_CHANGES_SQL, LEAD_LIST } from '../src/leads/leads.sql';
import { COMPANY_SELECTABLE } from '../src/companies/company.fields';
import type { Selectable } from '../src/items/field-selection';
import { LEAD_SELECTABLE } from '../src/leads/lead.fields';
import type { ListStatements } from '../src/items/list-page';
import { COMPANY_VISITS, listStatement, visitListStatement } from './list-statement';
import type { Queryable } from '../src/database/queryable';
import { BodyBudget } from '../src/items/body-budget';
import { POOL_SIZE, PRIORITY_CONNECTIONS, poolConfig } from '../src/database/pool-config';
import { planIncludesApiAccess } from '../src/auth/plans';
import { cursorPage } from '../src/items/cursor-page';

/**
 * The bare limit's answers: the fastest thing that answers the benchmark's requests with the same
 * bytes. node:http and pg, no framework, no ORM, no validation beyond what the benchmark sends, no
 * rate limit, no logging. It runs the service's own SQL (imported, not copied) on a pool configured
 * like the service's, and looks the key up by its hash the same way. The change feeds run the
 * service's own pages (statement, then the signed cursor) on that pool.
 *
 * The bare server (bare-server.ts) is this handler on node:http; Express alone and NestJS alone
 * (framework-servers.ts) route the same requests to it, so that the framework's own toll on each
 * workload is measured apart from the service's work.
 */
const { DATABASE_URL, API_KEY_SECRET = '' } = process.env;

// One pool of as many connections as the service's two (its key lookups' and its statements').
const pool = new Pool(poolConfig(DATABASE_URL ?? '', 'startup', POOL_SIZE + PRIORITY_CONNECTIONS));

const LISTS: Record<string, [ListStatements, Selectable]> = {
  '/v1/companies': [COMPANY_LIST, COMPANY_SELECTABLE],
  '/v1/leads': [LEAD_LIST, LEAD_SELECTABLE],
};

// The same secret makes the same cursors: the answers stay byte for byte the service's.
const signed = new SignedCursors({ API_KEY_SECRET } as Environment);
const cursors = new ChangeCursors(signed);
// A feed's pages run their statement through `query` alone: here the pool's for every workspace,
// as in the service without its fair queue, sized through a budget of large bodies as the
// service's is.
const bodies = new BodyBudget();
const database = {
  query: async <T extends QueryResultRow>(sql: string, values: unknown[]) =>
    (await pool.query<T>(sql, values)).rows,
} satisfies Queryable;
const feedPages = (feed: Feed) =>
  new ChangeFeedPages(feed, { forWorkspace: () => database }, cursors, bodies);

const FEEDS: Record<string, [ChangeFeedPages, string]> = {
  '/v1/companies/changes': [feedPages('companies'), COMPANY_CHANGES_SQL],
  '/v1/leads/changes': [feedPages('leads'), LEAD_CHANGES_SQL],
};

/**
 * A page of the workspace's visits or of one company's, as src/visits/visits.service.ts reads
 * it: the same statement and values, the same signed cursor (the page's last start and id).
 */
async function visitPage(workspaceId: string, path: string, query: URLSearchParams) {
  const { sql, values, scope, company } = visitListStatement(workspaceId, path, query, signed);
  const row = await bodies.read(
    `${company ? 'company-visits' : 'visits'}:${workspaceId}`,
    async (cap) =>
      (
        await pool.query<{
          has_more: boolean;
          last_started_at: string | null;
          last_id: string | null;
          data: string | null;
          bytes: number;
        }>(sql, [...values, cap])
      ).rows[0],
    (found) => found.data,
  );
  if (row === undefined) throw new Error('the visit list statement returned no row');
  const next =
    row.has_more && row.last_started_at !== null && row.last_id !== null
      ? signed.sign(scope, workspaceId, `${row.last_started_at} ${row.last_id}`)
      : null;
  return cursorPage(row, next, row.has_more);
}

function send(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  response.end(body);
}

async function workspaceOf(authorization = ''): Promise<ApiKeyRow | undefined> {
  const key = authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
  if (!isWellFormedApiKey(key)) return undefined;
  const { rows } = await pool.query<ApiKeyRow>(API_KEY_BY_HASH_SQL, [
    [hashApiKey(key, API_KEY_SECRET)],
  ]);
  const found = rows[0];
  if (!found || found.revokedAt || found.suspended || !planIncludesApiAccess(found.plan)) {
    return undefined;
  }
  return found;
}

/** Answers one of the benchmark's requests as the bare limit does. */
export function answerBare(request: IncomingMessage, response: ServerResponse): void {
  const [path, search = ''] = (request.url ?? '/').split('?', 2);
  if (path.startsWith('/health')) return send(response, 200, '{"status":"ok"}');
  workspaceOf(request.headers.authorization)
    .then(async (found) => {
      if (!found) return send(response, 401, '{"statusCode":401}');
      if (path === '/v1/me') {
        const { workspaceId: id, workspaceName: name, plan } = found;
        return send(response, 200, JSON.stringify({ id, name, plan }));
      }
      const query = new URLSearchParams(search);
      const feed = FEEDS[path];
      if (feed) {
        const [pages, sql] = feed;
        const cursor = query.get('cursor') ?? undefined;
        const page = { cursor, limit: Number(query.get('limit') ?? 200) };
        return send(response, 200, await pages.page(found.workspaceId, sql, page));
      }
      if (path === '/v1/visits' || COMPANY_VISITS.test(path)) {
        return send(response, 200, await visitPage(found.workspaceId, path, query));
      }
      const list = LISTS[path];
      if (!list) return send(response, 404, '{"statusCode":404}');
      const { rows } = await pool.query<{ body: string }>(
        ...listStatement(...list, found.workspaceId, query),
      );
      send(response, 200, rows[0].body);
    })
    .catch((error: unknown) => {
      console.error(error);
      send(response, 500, '{"statusCode":500}');
    });
}
