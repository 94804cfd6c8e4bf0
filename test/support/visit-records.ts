import type { PageViewDto, VisitDto } from '../../src/visits/dto/visit.dto';
import { runAdminCommandWithInput } from './admin';

/*
 * Visits as `admin import-visits` reads them (docs/admin.md, "Importing visits"): a line is a
 * visit as the API returns it without its derived fields. Dates are relative to now, since the
 * import refuses a visit in the future or past the retention; milliseconds, so that a round trip
 * shows any loss.
 */

/** A line of an import: a Visit without durationSeconds, pageViewCount and landingPage. */
export type VisitLine = Omit<VisitDto, 'durationSeconds' | 'pageViewCount' | 'landingPage'>;

const DAY_MS = 86_400_000;
let sequence = 0;
const next = () => (++sequence).toString().padStart(6, '0');

/** `ms` from now, as an ISO date-time with milliseconds, on a whole second plus 123 ms. */
export function fromNow(ms: number): string {
  return new Date(Math.floor((Date.now() + ms) / 1000) * 1000 + 123).toISOString();
}

/** `days` days ago (fractions allowed). */
export function daysAgo(days: number): string {
  return fromNow(-days * DAY_MS);
}

/** An ISO date-time `ms` after `iso`. */
export function plus(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

/** A page view of a visit, `secondsIn` seconds after `startedAt`. */
export function pageRecord(
  startedAt: string,
  secondsIn: number,
  overrides: Partial<PageViewDto> = {},
): PageViewDto {
  return {
    hostname: 'www.example.com',
    path: `/page-${next()}`,
    title: 'A page',
    viewedAt: plus(startedAt, secondsIn * 1000),
    secondsOnPage: 30,
    ...overrides,
  };
}

/**
 * A visit of `companyId` that started `overrides.startedAt` (default two days ago), lasting ten
 * minutes, with two pages unless `pages` is given.
 */
export function visitLine(companyId: string, overrides: Partial<VisitLine> = {}): VisitLine {
  const startedAt = overrides.startedAt ?? daysAgo(2);
  return {
    id: `vi_${next()}`,
    companyId,
    startedAt,
    endedAt: plus(startedAt, 600_000),
    referrer: 'https://www.google.com/',
    source: 'newsletter',
    medium: 'email',
    campaign: 'autumn',
    term: null,
    content: null,
    deviceType: 'desktop',
    country: 'FR',
    pages: [
      pageRecord(startedAt, 0, { path: '/' }),
      pageRecord(startedAt, 60, { path: '/pricing', secondsOnPage: null }),
    ],
    ...overrides,
  };
}

/**
 * The visit as the API returns it: its derived fields computed, its pages in `viewedAt` order
 * (pages viewed at the same instant in the line's order).
 */
export function asReturned(line: VisitLine): VisitDto {
  const pages = line.pages
    .map((page, index) => ({ page, index }))
    .sort((a, b) => Date.parse(a.page.viewedAt) - Date.parse(b.page.viewedAt) || a.index - b.index)
    .map(({ page }) => page);
  return {
    id: line.id,
    companyId: line.companyId,
    startedAt: line.startedAt,
    endedAt: line.endedAt,
    durationSeconds: Math.floor((Date.parse(line.endedAt) - Date.parse(line.startedAt)) / 1000),
    pageViewCount: pages.length,
    landingPage: pages[0].path,
    referrer: line.referrer,
    source: line.source,
    medium: line.medium,
    campaign: line.campaign,
    term: line.term,
    content: line.content,
    deviceType: line.deviceType,
    country: line.country,
    pages,
  };
}

/** Lines as NDJSON: objects as JSON, strings as they are, each ended by a newline. */
export function ndjson(lines: (VisitLine | string)[]): string {
  return lines
    .map((line) => `${typeof line === 'string' ? line : JSON.stringify(line)}\n`)
    .join('');
}

/**
 * Imports `lines` into a workspace with `admin import-visits` from standard input, expecting it to
 * succeed; its `--json` summary. `env` adds to the database's (a retention, for old visits).
 */
export async function importVisitLines(
  databaseUrl: string,
  workspaceId: string,
  lines: VisitLine[],
  env: Record<string, string> = {},
): Promise<unknown> {
  const run = await runAdminCommandWithInput(
    { DATABASE_URL: databaseUrl, ...env },
    ndjson(lines),
    'import-visits',
    '--workspace',
    workspaceId,
    '--file',
    '-',
    '--json',
  );
  expect(run).toMatchObject({ status: 0, stderr: '' });
  return JSON.parse(run.stdout) as unknown;
}
