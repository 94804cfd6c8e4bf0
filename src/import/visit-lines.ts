import type { FieldValues } from '../items/fields';
import {
  MAX_PAGES_PER_VISIT,
  MAX_VISIT_HOURS,
  PAGE_VIEW_FIELDS,
  VISIT_FIELDS,
} from '../visits/visit.fields';
import { FieldChecker, isObject } from './field-checker';

/*
 * The visits import format (docs/admin.md, "Importing visits"): NDJSON, one visit per line, as
 * the API returns it without its derived fields (durationSeconds, pageViewCount, landingPage).
 * This file checks one line, without the database; what needs the database (an id used twice in
 * the file, the company, an id of another workspace) is checked by VisitImportService.
 */

/** A page view ready to write: the API's fields, its date parsed. */
export type PageViewRecord = FieldValues<typeof PAGE_VIEW_FIELDS>;

/** A visit ready to write: the API's fields but the derived ones, its pages in their order. */
export type VisitRecord = Omit<
  FieldValues<typeof VISIT_FIELDS>,
  'durationSeconds' | 'pageViewCount' | 'landingPage'
> & { pages: PageViewRecord[] };

/** A line checked: the visit, or what is wrong with it (and its id, when it has a usable one). */
export type CheckedLine =
  | { visit: VisitRecord; id: string; problems?: undefined }
  | { visit?: undefined; id: string | null; problems: string[] };

/** The bounds of `startedAt` at the time of an import. */
export interface VisitWindow {
  /** The start of the retention: an earlier visit would never be read. */
  earliest: Date;
  /** The latest start accepted: now, and 5 minutes for the clocks' differences. */
  latest: Date;
  retentionDays: number;
}

/** A visit starting later than this after the import's clock is refused as in the future. */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

const MAX_VISIT_MS = MAX_VISIT_HOURS * 3_600_000;
const VISIT_FIELD_NAMES = [
  ...Object.entries(VISIT_FIELDS).flatMap(([name, field]) => (field.derived ? [] : [name])),
  'pages',
];
const DERIVED = Object.entries(VISIT_FIELDS).flatMap(([name, field]) =>
  field.derived ? [name] : [],
);

/** Checks one line's text: every problem of the visit and its pages, each naming its field. */
export function checkVisitLine(text: string, window: VisitWindow): CheckedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { id: null, problems: [`not valid JSON: ${(error as Error).message}`] };
  }
  if (!isObject(raw)) return { id: null, problems: ['must be a JSON object (one visit)'] };
  const derivedGiven = DERIVED.filter((name) => name in raw);
  const fields = new FieldChecker(
    Object.fromEntries(Object.entries(raw).filter(([name]) => !DERIVED.includes(name))),
    VISIT_FIELD_NAMES,
  );
  for (const name of derivedGiven) {
    fields.problem(`${name} is derived by the import from the other fields: leave it out`);
  }
  const visit = fields.read(VISIT_FIELDS);
  fields.readableId('id', visit.id, '/v1/visits/');
  const problems = fields.problems;
  if (fields.isValid('startedAt')) {
    const started = visit.startedAt.getTime();
    if (started > window.latest.getTime()) {
      problems.push(
        `startedAt ${visit.startedAt.toISOString()} is in the future (beyond ${FUTURE_TOLERANCE_MS / 60_000} minutes)`,
      );
    } else if (started < window.earliest.getTime()) {
      problems.push(
        `startedAt ${visit.startedAt.toISOString()} is older than the retention (${window.retentionDays} days, from ${window.earliest.toISOString()})`,
      );
    }
    if (fields.isValid('endedAt')) {
      const ended = visit.endedAt.getTime();
      if (ended < started) problems.push('endedAt must not be before startedAt');
      else if (ended - started > MAX_VISIT_MS) {
        problems.push(`endedAt must be at most ${MAX_VISIT_HOURS} hours after startedAt`);
      }
    }
  }
  const pages = checkPages(fields, visit);
  const id = fields.isValid('id') ? visit.id : null;
  if (problems.length > 0 || id === null) return { id, problems };
  return { id, visit: { ...visit, pages } };
}

/** The visit's pages, each checked (problems go to the visit's), in `viewedAt` order. */
function checkPages(fields: FieldChecker, visit: Omit<VisitRecord, 'pages'>): PageViewRecord[] {
  const list = fields.array('pages');
  if (!fields.isValid('pages')) return [];
  if (list.length === 0) fields.problem('pages must hold at least one page view');
  if (list.length > MAX_PAGES_PER_VISIT) {
    fields.problem(
      `pages must hold at most ${MAX_PAGES_PER_VISIT} page views (it holds ${list.length})`,
    );
    return [];
  }
  const within = fields.isValid('startedAt') && fields.isValid('endedAt');
  const pages = list.map((raw, index) => {
    const page = new FieldChecker(raw, Object.keys(PAGE_VIEW_FIELDS));
    const record = page.read(PAGE_VIEW_FIELDS);
    if (page.isValid('viewedAt') && within) {
      const viewed = record.viewedAt.getTime();
      if (viewed < visit.startedAt.getTime() || viewed > visit.endedAt.getTime()) {
        page.problem('viewedAt must be within the visit (from startedAt to endedAt)');
      }
    }
    for (const problem of page.problems) fields.problem(`pages[${index}]: ${problem}`);
    return record;
  });
  // Stable: pages viewed at the same instant keep the order the tracker gave them.
  return pages.sort((a, b) => a.viewedAt.getTime() - b.viewedAt.getTime());
}
