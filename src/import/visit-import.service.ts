import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Environment } from '../config/environment';
import { Database } from '../database/database';
import { ndjsonLines } from './ndjson-lines';
import { badLineRow, COPY_STAGING, STAGING_TABLE, visitRows } from './visit-copy';
import { checkVisitLine, FUTURE_TOLERANCE_MS, type VisitWindow } from './visit-lines';

/** What an import did, per visit and per page view (a page view is its visit's place). */
export interface VisitImportCounts {
  visits: { added: number; changed: number; unchanged: number };
  pageViews: { added: number; changed: number; unchanged: number; removed: number };
}

/** Lines a refusal names, at most; the others are counted. */
export const MAX_PROBLEMS_NAMED = 100;

/** Refused input: nothing was written; the first bad lines named, the others counted. */
export class VisitImportRefusedException extends BadRequestException {
  constructor(
    readonly problems: string[],
    readonly badLines: number,
  ) {
    const lines = badLines === 1 ? '1 line is' : `${badLines} lines are`;
    const more = badLines - problems.length;
    super(
      [
        `import refused, nothing was written: ${lines} invalid`,
        ...problems,
        ...(more > 0 ? [`and ${more} more invalid lines`] : []),
      ].join('\n  '),
    );
  }
}

/** A bad line as the refusal names it. */
interface Problem {
  line: number;
  message: string;
}

// One statement of the import may run long (millions of page views): not the API's 5 s.
const STATEMENT_TIMEOUT = '30min';
// Imports of one workspace run one at a time (what they compare with must not move under them).
const IMPORT_LOCK = 0x5649; // 'VI'

/**
 * Loads visits with their page views into a workspace from NDJSON (docs/admin.md, "Importing
 * visits"), all or nothing, in one transaction. The input is streamed: each line is checked
 * (visit-lines.ts) and sent on to the database by COPY into a staging table as it is read, so
 * memory holds a line at a time whatever the input's size. The database then checks what only it
 * knows, compares each visit with the one stored under its id, and writes the added and changed
 * ones in a few set-based statements; an unchanged visit is not written at all. A visit already
 * there is replaced whole, pages included (its old pages go with it: trigger of migration
 * 20261202000000_visits).
 */
@Injectable()
export class VisitImportService {
  constructor(
    private readonly database: Database,
    private readonly environment: Environment,
  ) {}

  async import(workspaceId: string, input: Readable): Promise<VisitImportCounts> {
    const client = await this.database.pool.connect();
    try {
      await client.query('BEGIN');
      try {
        const counts = await this.run(client, workspaceId, input);
        await client.query('COMMIT');
        return counts;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    } finally {
      client.release();
    }
  }

  private async run(
    client: PoolClient,
    workspaceId: string,
    input: Readable,
  ): Promise<VisitImportCounts> {
    await client.query(`SET LOCAL statement_timeout = '${STATEMENT_TIMEOUT}'`);
    const { rows: found } = await client.query('SELECT FROM workspaces WHERE id = $1', [
      workspaceId,
    ]);
    if (found.length === 0) throw new NotFoundException(`workspace ${workspaceId} does not exist`);
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
      IMPORT_LOCK,
      workspaceId,
    ]);
    await client.query(STAGING_TABLE);
    const lineProblems = await this.stage(client, input, this.window());
    await client.query('ANALYZE visit_import');
    const database = await databaseProblems(client, workspaceId);
    const bad = lineProblems.count + database.count;
    if (bad > 0) {
      const named = [...lineProblems.named, ...database.named]
        .sort((a, b) => a.line - b.line)
        .slice(0, MAX_PROBLEMS_NAMED)
        .map((problem) => problem.message);
      throw new VisitImportRefusedException(named, bad);
    }
    await client.query(
      `SELECT visit_partitions_make(min(started_at), max(started_at)) FROM visit_import WHERE ok`,
    );
    return merge(client, workspaceId);
  }

  /** The bounds of startedAt now: within the retention, and not in the future. */
  private window(): VisitWindow {
    const now = Date.now();
    const retentionDays = this.environment.VISIT_RETENTION_DAYS;
    return {
      earliest: new Date(now - retentionDays * 86_400_000),
      latest: new Date(now + FUTURE_TOLERANCE_MS),
      retentionDays,
    };
  }

  /**
   * Reads the input line by line into the staging table, by COPY, waiting whenever the database
   * is behind (the COPY stream's backpressure). Returns the lines' own problems: the first ones
   * named, all counted.
   */
  private async stage(
    client: PoolClient,
    input: Readable,
    window: VisitWindow,
  ): Promise<{ named: Problem[]; count: number }> {
    const named: Problem[] = [];
    let count = 0;
    const copy = client.query(copyFrom(COPY_STAGING));
    async function* rows(): AsyncGenerator<string> {
      for await (const line of ndjsonLines(input)) {
        const checked =
          line.text === undefined
            ? { id: null, problems: [line.problem] }
            : checkVisitLine(line.text, window);
        if (checked.visit !== undefined) {
          yield visitRows(line.number, checked.visit);
          continue;
        }
        count++;
        if (named.length < MAX_PROBLEMS_NAMED) {
          const id = checked.id === null ? 'no valid id' : `id ${checked.id}`;
          named.push({
            line: line.number,
            message: `line ${line.number} (${id}): ${checked.problems.join('; ')}`,
          });
        }
        yield badLineRow(line.number, checked.id);
      }
    }
    await pipeline(rows, copy);
    return { named, count };
  }
}

/**
 * What only the database knows, one problem per line: an id used by an earlier line, a company
 * that is not the workspace's, an id that another workspace's visit has. The companies found are
 * locked (FOR KEY SHARE, as a foreign key's check does) until the end, so that none of them can
 * be deleted before the visits are written.
 */
async function databaseProblems(
  client: PoolClient,
  workspaceId: string,
): Promise<{ named: Problem[]; count: number }> {
  await client.query(
    `SELECT FROM companies
    WHERE workspace_id = $1 AND id IN (SELECT company_id FROM visit_import WHERE ok AND position = 0)
    ORDER BY id FOR KEY SHARE`,
    [workspaceId],
  );
  const { rows } = await client.query<{ line: number; message: string; count: string }>(
    `WITH lines AS (
  SELECT line, id, ok, company_id FROM visit_import WHERE NOT ok OR position = 0
), found AS (
  SELECT line, format('line %s (id %s): id %s is already used by line %s', line, id, id, first) AS message
  FROM (SELECT line, id, min(line) OVER (PARTITION BY id) AS first FROM lines WHERE id IS NOT NULL) used
  WHERE line > first
  UNION ALL
  SELECT line, format('line %s (id %s): companyId %s is not a company of workspace %s', line, id, company_id, $1::text)
  FROM lines
  WHERE ok AND NOT EXISTS (SELECT FROM companies WHERE workspace_id = $1 AND id = lines.company_id)
  UNION ALL
  SELECT line, format('line %s (id %s): id %s belongs to another workspace', line, id, id)
  FROM lines
  WHERE ok AND EXISTS (SELECT FROM visits WHERE id = lines.id AND workspace_id <> $1)
)
SELECT line, message, count(*) OVER () AS count FROM found ORDER BY line, message LIMIT $2`,
    [workspaceId, MAX_PROBLEMS_NAMED],
  );
  return {
    named: rows.map(({ line, message }) => ({ line, message })),
    count: rows.length === 0 ? 0 : Number(rows[0].count),
  };
}

// A visit's own columns, as the import writes and compares them (durationSeconds is generated).
const VISIT_COLUMNS = [
  'company_id',
  'started_at',
  'ended_at',
  'page_view_count',
  'landing_page',
  'referrer',
  'source',
  'medium',
  'campaign',
  'term',
  'content',
  'device_type',
  'country',
];
const PAGE_COLUMNS = ['hostname', 'path', 'title', 'viewed_at', 'seconds_on_page'];
const cols = (alias: string, columns: string[]) => columns.map((c) => `${alias}.${c}`).join(', ');
// The staged visit's columns as stored: the device type is staged as text.
const STAGED_VISIT = VISIT_COLUMNS.map((column) =>
  column === 'device_type' ? 'staged.device_type::"DeviceType"' : `staged.${column}`,
).join(', ');

/**
 * Writes the staged visits: each compared with the visit stored under its id in the workspace
 * (its columns and its pages, position by position), then the changed ones deleted with their
 * pages and written again with the added ones. Counted before anything moves.
 */
async function merge(client: PoolClient, workspaceId: string): Promise<VisitImportCounts> {
  const staged = 'visit_import staged';
  await client.query(
    `CREATE TEMP TABLE visit_import_plan ON COMMIT DROP AS
SELECT staged.line, staged.id, stored.started_at AS stored_started_at,
  CASE
    WHEN stored.id IS NULL THEN 'added'
    WHEN (${STAGED_VISIT}) IS NOT DISTINCT FROM (${cols('stored', VISIT_COLUMNS)})
      AND (SELECT array_agg((${cols('page', PAGE_COLUMNS)}) ORDER BY page.position)
          FROM visit_import page WHERE page.line = staged.line)
        IS NOT DISTINCT FROM
        (SELECT array_agg((${cols('page', PAGE_COLUMNS)}) ORDER BY page.position)
          FROM page_views page
          WHERE page.workspace_id = $1 AND page.visit_id = stored.id
            AND page.visit_started_at = stored.started_at)
      THEN 'unchanged'
    ELSE 'changed'
  END AS outcome
FROM ${staged}
LEFT JOIN visits stored ON stored.workspace_id = $1 AND stored.id = staged.id
WHERE staged.position = 0`,
    [workspaceId],
  );
  const {
    rows: [counts],
  } = await client.query<Record<string, string>>(
    `SELECT
  (SELECT count(*) FROM visit_import_plan WHERE outcome = 'added') AS visits_added,
  (SELECT count(*) FROM visit_import_plan WHERE outcome = 'changed') AS visits_changed,
  (SELECT count(*) FROM visit_import_plan WHERE outcome = 'unchanged') AS visits_unchanged,
  count(*) FILTER (WHERE plan.outcome = 'added' OR (plan.outcome = 'changed' AND old.position IS NULL)) AS pages_added,
  count(*) FILTER (WHERE plan.outcome = 'unchanged') AS pages_unchanged,
  count(*) FILTER (WHERE plan.outcome = 'changed' AND new.position IS NOT NULL AND old.position IS NOT NULL
    AND (${cols('new', PAGE_COLUMNS)}) IS DISTINCT FROM (${cols('old', PAGE_COLUMNS)})) AS pages_changed,
  count(*) FILTER (WHERE plan.outcome = 'changed' AND new.position IS NOT NULL AND old.position IS NOT NULL
    AND (${cols('new', PAGE_COLUMNS)}) IS NOT DISTINCT FROM (${cols('old', PAGE_COLUMNS)})) AS pages_kept,
  count(*) FILTER (WHERE new.position IS NULL) AS pages_removed
FROM (SELECT staged.* FROM ${staged} WHERE staged.ok) new
FULL JOIN (
  SELECT stored.*, plan.line AS plan_line FROM page_views stored
  JOIN visit_import_plan plan ON plan.outcome = 'changed' AND stored.workspace_id = $1
    AND stored.visit_id = plan.id AND stored.visit_started_at = plan.stored_started_at
) old ON old.plan_line = new.line AND old.position = new.position
LEFT JOIN visit_import_plan plan ON plan.line = coalesce(new.line, old.plan_line)`,
    [workspaceId],
  );
  await client.query(
    `DELETE FROM visits stored USING visit_import_plan plan
WHERE plan.outcome = 'changed' AND stored.workspace_id = $1 AND stored.id = plan.id
  AND stored.started_at = plan.stored_started_at`,
    [workspaceId],
  );
  await client.query(
    `INSERT INTO visits (workspace_id, id, ${VISIT_COLUMNS.join(', ')})
SELECT $1, staged.id, ${STAGED_VISIT}
FROM ${staged} JOIN visit_import_plan plan USING (line)
WHERE staged.position = 0 AND plan.outcome <> 'unchanged'`,
    [workspaceId],
  );
  await client.query(
    `INSERT INTO page_views (workspace_id, visit_id, visit_started_at, position, company_id, ${PAGE_COLUMNS.join(', ')})
SELECT $1, staged.id, staged.started_at, staged.position, staged.company_id, ${cols('staged', PAGE_COLUMNS)}
FROM ${staged} JOIN visit_import_plan plan USING (line)
WHERE staged.ok AND plan.outcome <> 'unchanged'`,
    [workspaceId],
  );
  const n = (name: string) => Number(counts[name]);
  return {
    visits: {
      added: n('visits_added'),
      changed: n('visits_changed'),
      unchanged: n('visits_unchanged'),
    },
    pageViews: {
      added: n('pages_added'),
      changed: n('pages_changed'),
      unchanged: n('pages_unchanged') + n('pages_kept'),
      removed: n('pages_removed'),
    },
  };
}
