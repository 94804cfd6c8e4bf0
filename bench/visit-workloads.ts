import { VISITED_SINCE_DEFAULT_DAYS } from '../src/companies/company.fields';
import { LARGE_WORKSPACE_ID, RARE_PAGE } from './data';
import { visitListStatement } from './list-statement';
import { now, scale, signedCursors, smoke } from './run-settings';
import {
  latencyAgainst,
  latencyAgainstWorkload,
  latencyAtMost,
  throughputAgainst,
} from './targets';
import type {
  Request,
  SqlValue,
  VisitCases,
  WorkloadContext,
  WorkloadDeclaration,
} from './workload';
import { withClient } from './with-client';

/*
 * The visits' workloads (docs/benchmarks.md, "Visits"): a company's visits (v), the workspace's
 * recent ones, first and deep (v2, v2d), and companies by the pages they viewed (vp1, vp40,
 * vp10).
 */

/** How deep (v2d)'s page starts, in visits of the 7-day window. */
export const DEEP_VISITS = smoke ? 1_000 : 10_000;
/** Companies whose visits (v) reads, one at random per request. */
const VISIT_COMPANIES = 200;

/** (v2)'s window: the visits of the 7 days before the run. */
const SINCE_7_DAYS = new Date(now.getTime() - 7 * 86_400_000).toISOString();

export async function locateVisitCases(url: string): Promise<VisitCases> {
  return withClient(url, async (client) => {
    const { rows: companies } = await client.query<{ id: string }>(
      `SELECT c.id FROM companies c
       WHERE c.workspace_id = $1
         AND EXISTS (SELECT FROM visits v WHERE v.workspace_id = $1 AND v.company_id = c.id)
       ORDER BY c.id LIMIT $2`,
      [LARGE_WORKSPACE_ID, VISIT_COMPANIES],
    );
    const { rows: deep } = await client.query<{ position: string }>(
      `SELECT to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ' ' || id
         AS position
       FROM visits WHERE workspace_id = $1 AND started_at >= $2
       ORDER BY started_at DESC, id DESC OFFSET $3 LIMIT 1`,
      [LARGE_WORKSPACE_ID, SINCE_7_DAYS, DEEP_VISITS - 1],
    );
    if (companies.length === 0 || !deep[0]) {
      throw new Error(`the large workspace has too few visits for (v) and (v2d)`);
    }
    return {
      companies: companies.map(({ id }) => id),
      deepCursor: signedCursors.sign('visits', LARGE_WORKSPACE_ID, deep[0].position),
    };
  });
}

// A large body's cap for pgbench's sized statements: any page fits.
const NO_CAP = 1 << 30;

/** A visit list request's statements, as the service runs them: the key lookup, then the page. */
function visitStatements(request: Request, context: WorkloadContext): [string, SqlValue[]][] {
  const url = new URL(request.path, 'http://bench');
  const { sql, values } = visitListStatement(
    LARGE_WORKSPACE_ID,
    url.pathname,
    url.searchParams,
    signedCursors,
  );
  return [context.keyLookup(request.key), [sql, [...values, NO_CAP] as SqlValue[]]];
}

const recentVisits = (cursor?: string) => {
  const query = new URLSearchParams({ since: SINCE_7_DAYS });
  if (cursor !== undefined) query.set('cursor', cursor);
  return `/v1/visits?${query.toString()}`;
};

/** The companies of the large workspace that viewed one of `pages` in the default window. */
function visitedPage(
  pages: string[],
  clients?: number,
): Pick<WorkloadDeclaration, 'requests' | 'connections' | 'servers' | 'statements'> {
  return {
    requests: (context) =>
      pages.map((page) => ({
        path: `/v1/companies?visitedPage=${encodeURIComponent(page)}&visitedSince=${VISITED_SINCE}`,
        key: context.large,
      })),
    connections: clients,
    servers: ['service', 'bare'],
    statements: (request, context) => context.companies(request),
  };
}
const WINDOW = `in the last ${VISITED_SINCE_DEFAULT_DAYS} days`;
// The default window, given as the instant it starts at the run's `now`: the same page views for
// every server, where the default's "now" moves on between two answers (about one page view a
// second leaves the window of the large workspace's data) and the answers would differ.
const VISITED_SINCE = encodeURIComponent(
  new Date(now.getTime() - VISITED_SINCE_DEFAULT_DAYS * 86_400_000).toISOString(),
);

export const VISIT_WORKLOADS: WorkloadDeclaration[] = [
  {
    id: 'v',
    title: `a company's visits, page one (limit=50), ${VISIT_COMPANIES} companies of the large workspace`,
    requests: (context) =>
      context.visits.companies.map((company) => ({
        path: `/v1/companies/${company}/visits`,
        key: context.large,
      })),
    servers: ['service', 'bare'],
    statements: visitStatements,
    targets: [throughputAgainst('bare', 0.85), latencyAgainst('p99', 'bare', 1.5)],
  },
  {
    id: 'v2',
    title: `the large workspace's visits of the last 7 days, page one (limit=50)`,
    requests: (context) => [{ path: recentVisits(), key: context.large }],
    servers: ['service', 'bare'],
    statements: visitStatements,
    targets: [throughputAgainst('bare', 0.85)],
  },
  {
    id: 'v2d',
    title: `the same, ${DEEP_VISITS.toLocaleString('en')} visits deep by cursor (limit=50)`,
    requests: (context) => [{ path: recentVisits(context.visits.deepCursor), key: context.large }],
    servers: ['service', 'bare'],
    statements: visitStatements,
    targets: [throughputAgainst('bare', 0.85), latencyAgainstWorkload('p50', 'v2', 1.5)],
  },
  // The default window's length, so that the exact total counts 30 days of page views.
  {
    ...visitedPage([RARE_PAGE], 1),
    id: 'vp1',
    title: `companies that viewed ${RARE_PAGE} ${WINDOW} (about 1 %), page one, one client`,
    targets: [latencyAtMost('p50', 50)],
  },
  {
    ...visitedPage(['/'], 1),
    id: 'vp40',
    title: `companies that viewed / ${WINDOW} (about 40 %), page one, one client`,
    targets: [latencyAtMost('p50', 250)],
  },
  {
    ...visitedPage([RARE_PAGE, '/']),
    id: 'vp10',
    title: "(vp1) and (vp40) mixed, at the run's concurrency",
    targets: [throughputAgainst('bare', 0.9)],
  },
];

/** The share of the large workspace's companies that viewed each page of (vp) in its window. */
export async function visitedShares(url: string): Promise<{ page: string; share: number }[]> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ page: string; share: number }>(
      `SELECT page.path AS page,
         count(DISTINCT page.company_id)::float8 / $3 AS share
       FROM page_views page
       WHERE page.workspace_id = $1 AND page.path = ANY($2::text[])
         AND page.viewed_at >= $4
       GROUP BY page.path ORDER BY page.path`,
      [
        LARGE_WORKSPACE_ID,
        [RARE_PAGE, '/'],
        scale.largeCompanies,
        decodeURIComponent(VISITED_SINCE),
      ],
    );
    return rows;
  });
}
