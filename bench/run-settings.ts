import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ChangeCursors } from '../src/changes/change-cursor';
import type { Environment } from '../src/config/environment';
import { FULL_SCALE, SMOKE_SCALE, type BenchScale } from './data';
import { type ServerName } from './report';

/*
 * The run's settings (command line and environment), its shared types, and its log line.
 */

export const ROOT = join(__dirname, '..', '..');
export const smoke = process.argv.includes('--smoke');
export const reuseData = process.argv.includes('--reuse-data');
export const scale: BenchScale = smoke ? SMOKE_SCALE : FULL_SCALE;
export const seconds = Number(process.env.BENCH_SECONDS ?? (smoke ? 1 : 10));
export const warmupSeconds = smoke ? 0.5 : 2;
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
export const secret = randomBytes(32).toString('base64url');
// Signs cursors at any position of the feeds, as the servers (given the same secret) do.
export const cursors = new ChangeCursors({ API_KEY_SECRET: secret } as Environment);
// Changes per feed page (the feed's maximum), and items per page of the offset sync (the list's).
export const FEED_LIMIT = 1000;
export const LIST_LIMIT = 200;
// Companies (with their contacts) per import of workload i, and pairs of imports, on and off.
export const IMPORT = smoke ? { companies: 1_000, rounds: 1 } : { companies: 10_000, rounds: 5 };
// (w) Changes committed per second while webhooks are measured: above the 500 events/s target.
export const WEBHOOK_RATE = 600;
// Every date of the data and of the `since` filters is relative to this instant.
export const now = new Date();

export interface Request {
  path: string;
  key: string;
  /** A JSON body, POSTed (the MCP endpoint); none: a GET. */
  body?: string;
}

export type SqlValue = string | number | Date | string[] | null | undefined;

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
  /** The SQL statements of one such request, with their parameters, for pgbench. */
  statements: (request: Request) => [string, SqlValue[]][];
}

export function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}
