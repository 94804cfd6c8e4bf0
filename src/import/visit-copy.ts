import type { VisitRecord } from './visit-lines';

/*
 * The staging table of a visits import, and its rows in COPY's text format. One row per page
 * view, each with its line, its visit's id, company and start; the first page's row (position 0)
 * also carries the visit's own fields. A bad line is one row with its line and id (when usable),
 * `ok` false: the database then finds an id used twice among every line, good or bad.
 */
export const STAGING_TABLE = `CREATE TEMP TABLE visit_import (
  line integer NOT NULL,
  ok boolean NOT NULL,
  id text COLLATE "C",
  company_id text,
  started_at timestamptz(3),
  ended_at timestamptz(3),
  referrer text,
  source text,
  medium text,
  campaign text,
  term text,
  content text,
  device_type text,
  country text,
  page_view_count integer,
  landing_page text,
  position smallint,
  hostname text,
  path text COLLATE "C",
  title text,
  viewed_at timestamptz(3),
  seconds_on_page integer
) ON COMMIT DROP`;

export const COPY_STAGING = 'COPY visit_import FROM STDIN';

type Value = string | number | boolean | Date | null;

/** A value in COPY's text format: `\N` for null, and the format's four escapes. */
function field(value: Value): string {
  if (value === null) return '\\N';
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'string') return String(value);
  return value.replace(/[\\\n\r\t]/g, (character) => ESCAPES[character]);
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function row(values: Value[]): string {
  return `${values.map(field).join('\t')}\n`;
}

/** A good line's rows: one per page view, the first with the visit's fields. */
export function visitRows(line: number, visit: VisitRecord): string {
  const { pages } = visit;
  const head: Value[] = [line, true, visit.id, visit.companyId, visit.startedAt];
  const none = Array<null>(11).fill(null);
  return pages
    .map((page, position) =>
      row([
        ...head,
        ...(position === 0
          ? [
              visit.endedAt,
              visit.referrer,
              visit.source,
              visit.medium,
              visit.campaign,
              visit.term,
              visit.content,
              visit.deviceType,
              visit.country,
              pages.length,
              pages[0].path,
            ]
          : none),
        position,
        page.hostname,
        page.path,
        page.title,
        page.viewedAt,
        page.secondsOnPage,
      ]),
    )
    .join('');
}

/** A bad line's row: where it is, and its id when it has a usable one. */
export function badLineRow(line: number, id: string | null): string {
  return row([line, false, id, ...Array<null>(19).fill(null)]);
}
