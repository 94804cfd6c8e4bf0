import type { FeedPosition } from './feeds';
import type { LookupValues } from './lookups';
import type { ServerName } from './run-settings';
import type { WorkloadTarget } from './targets';

/*
 * What a workload is: declared as data (workloads.ts), made into requests once the run's data
 * and keys exist.
 */

export interface Request {
  path: string;
  key: string;
  /** A JSON body, POSTed (the MCP endpoint); none: a GET. */
  body?: string;
}

export type SqlValue = string | number | Date | string[] | null | undefined;

/** The SQL statements of one request, with their parameters, for pgbench. */
export type Statements = (request: Request) => [string, SqlValue[]][];

/** A workload as the run loads it: its requests, drawn at random, on the servers it names. */
export interface Workload {
  id: string;
  title: string;
  requests: Request[];
  /** Concurrent connections, when not the run's. */
  connections?: number;
  /** The servers measured, when not all. */
  servers?: ServerName[];
  /** Request headers besides the key's. */
  headers?: Record<string, string>;
  /** The status every answer must have, when not 200. */
  expectedStatus?: number;
  statements: Statements;
}

/** What a workload's requests are made of: the run's data, keys and statements. */
export interface WorkloadContext {
  /** The key of a workspace of the data, and every workspace's. */
  keyOf(workspace: string): string;
  everyKey: string[];
  /** The small workspaces' ids. */
  small: string[];
  /** The large workspace's key. */
  large: string;
  /** A request's statements: the key lookup, then the companies' or the leads' list statement. */
  companies: Statements;
  leads: Statements;
  /** The key lookup's statement alone. */
  keyLookup(key: string): [string, SqlValue[]];
  /** Where each feed page (g1–g3) starts: none for the first page. */
  feedPages: Map<string, FeedPosition | undefined>;
  /** The page of (r) and (r304), with the ETag the service gives it. */
  revalidated: { path: string; etag: string };
  /** Domains and texts of the large workspace, for (l) and (l1). */
  lookups: LookupValues;
  /** Companies with visits and a deep cursor, for (v) and (v2d). */
  visits: VisitCases;
}

/** What the visit workloads' requests are made of, once the data exists (bench/visit-workloads.ts). */
export interface VisitCases {
  /** Companies of the large workspace with visits. */
  companies: string[];
  /** (v2d)'s cursor: at the DEEP_VISITS-th visit of the window, newest first. */
  deepCursor: string;
}

/**
 * A workload as declared: its requests and statements from the run's context, and its targets
 * beside it (the report writes one row for each, "not run" when the workload was not).
 */
export interface WorkloadDeclaration extends Omit<
  Workload,
  'title' | 'requests' | 'headers' | 'statements'
> {
  title: string | ((context: WorkloadContext) => string);
  headers?: Record<string, string> | ((context: WorkloadContext) => Record<string, string>);
  requests: (context: WorkloadContext) => Request[];
  statements: (request: Request, context: WorkloadContext) => [string, SqlValue[]][];
  targets?: WorkloadTarget[];
}

/** The workload the run loads, from its declaration. */
export function workloadOf(declaration: WorkloadDeclaration, context: WorkloadContext): Workload {
  const { id, connections, servers, headers, expectedStatus, title, requests, statements } =
    declaration;
  return {
    id,
    title: typeof title === 'string' ? title : title(context),
    requests: requests(context),
    connections,
    servers,
    headers: typeof headers === 'function' ? headers(context) : headers,
    expectedStatus,
    statements: (request) => statements(request, context),
  };
}
