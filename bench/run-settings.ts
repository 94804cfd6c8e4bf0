import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ChangeCursors } from '../src/changes/change-cursor';
import { SignedCursors } from '../src/items/signed-cursors';
import type { Environment } from '../src/config/environment';
import { FULL_SCALE, SMOKE_SCALE, type BenchScale } from './data';

/*
 * The run's settings (command line and environment), its shared types, and its log line.
 */

/**
 * `metrics`: the service with METRICS_PORT set; `*-older-node`: the service and the bare server on
 * the older supported Node; `*-alone`: Express, and NestJS on Express, answering (z)'s probe and
 * routing (a), (e) and (f) to the bare server's handler (each measured on a few workloads only).
 */
export type ServerName =
  | 'service'
  | 'bare'
  | 'naive'
  | 'metrics'
  | 'service-older-node'
  | 'bare-older-node'
  | 'express-alone'
  | 'nest-alone';

/** A server measured, or pgbench: the database alone running the same statements. */
export type MeasuredServer = ServerName | 'pgbench';

/** What a workload's load measured on one server. */
export interface Measurement {
  server: MeasuredServer;
  workload: string;
  rps: number;
  /** Milliseconds, over every response of the measured period. */
  p50: number;
  p99: number;
  /** Responses other than 200, errors and timeouts. */
  failures: number;
  /** Peak resident memory of the server process during the workload (NaN for pgbench). */
  peakRssMb: number;
  /** The server process's CPU time per response, and bytes received per response (not pgbench). */
  cpuMsPerRequest?: number;
  bytesPerResponse?: number;
}

// The project's root: above bench/ as compiled (dist-bench/bench/), or as read from source (tests).
export const ROOT = existsSync(join(__dirname, '..', 'package.json'))
  ? join(__dirname, '..')
  : join(__dirname, '..', '..');
export const smoke = process.argv.includes('--smoke');
export const reuseData = process.argv.includes('--reuse-data');
export const scale: BenchScale = smoke ? SMOKE_SCALE : FULL_SCALE;
export const seconds = Number(process.env.BENCH_SECONDS ?? (smoke ? 1 : 10));
export const warmupSeconds = smoke ? 0.5 : 2;
export const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
export const secret = randomBytes(32).toString('base64url');
// Signs cursors at any position of the feeds and the visit lists, as the servers (given the same
// secret) do.
export const signedCursors = new SignedCursors({ API_KEY_SECRET: secret } as Environment);
export const cursors = new ChangeCursors(signedCursors);
// Changes per feed page (the feed's maximum), and items per page of the offset sync (the list's).
export const FEED_LIMIT = 1000;
export const LIST_LIMIT = 200;
// Companies (with their contacts) per import of workload i, and pairs of imports, on and off.
export const IMPORT = smoke ? { companies: 1_000, rounds: 1 } : { companies: 10_000, rounds: 5 };
// Page views per visit import of (vi), and rounds of three (import on, COPY, import off).
export const VISIT_IMPORT = smoke
  ? { pageViews: 10_000, rounds: 1 }
  : { pageViews: 1_000_000, rounds: 3 };
// (w) Changes committed per second while webhooks are measured: above the 500 events/s target.
export const WEBHOOK_RATE = 600;
// Every date of the data and of the `since` filters is relative to this instant.
export const now = new Date();

export function log(line: string): void {
  console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}
