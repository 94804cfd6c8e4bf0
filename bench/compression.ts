import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { COMPRESSION } from '../src/http/compression';

/*
 * What compression costs and saves (src/http/compression.ts): each level of gzip and brotli on one
 * limit=200 page of companies, and the CPU time of the server process per request, which the
 * runner compares between workload (b) and (b-br), the same requests asking for `gzip, br`.
 */

export interface LevelRow {
  coding: 'gzip' | 'br';
  level: number;
  bytes: number;
  /** Median milliseconds of one compression, on this process's thread. */
  ms: number;
  /** The level the service uses. */
  chosen: boolean;
}

export interface CompressionLevels {
  /** The page's uncompressed size. */
  bytes: number;
  rows: LevelRow[];
}

/** Each gzip level (1-9) and brotli quality (0-11) on `body`: bytes and median ms. */
export function measureLevels(body: Buffer, runs: number): CompressionLevels {
  const median = (compress: () => Buffer, times: number): [number, number] => {
    const size = compress().length;
    const samples: number[] = [];
    for (let i = 0; i < times; i++) {
      const started = performance.now();
      compress();
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    return [size, samples[Math.floor(samples.length / 2)]];
  };
  const rows: LevelRow[] = [];
  for (let level = 1; level <= 9; level++) {
    const [bytes, ms] = median(() => gzipSync(body, { level }), runs);
    rows.push({ coding: 'gzip', level, bytes, ms, chosen: level === COMPRESSION.gzipLevel });
  }
  for (let quality = 0; quality <= 11; quality++) {
    const params = {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    };
    // The slowest qualities take hundreds of ms each: fewer runs.
    const times = quality >= 10 ? Math.min(runs, 5) : runs;
    const [bytes, ms] = median(() => brotliCompressSync(body, { params }), times);
    rows.push({
      coding: 'br',
      level: quality,
      bytes,
      ms,
      chosen: quality === COMPRESSION.brotliQuality,
    });
  }
  return { bytes: body.length, rows };
}

const TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** CPU seconds (user and system) a process has used so far, from /proc; NaN when unknown. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** One measurement of the load, as far as compression is concerned. */
export interface CompressionLoad {
  rps: number;
  cpuMsPerRequest: number;
  bytesPerResponse: number;
}

/** The report's section: (b) plain against (b-br), and the levels. */
export function renderCompression(
  plain: CompressionLoad | undefined,
  compressed: CompressionLoad | undefined,
  levels: CompressionLevels | undefined,
): string[] {
  const lines: string[] = [];
  const number = (value: number, digits = 0) =>
    Number.isFinite(value) ? value.toFixed(digits) : '–';
  const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : '–');
  if (plain && compressed) {
    lines.push(
      '### Compression: (b) plain and (b-br) with `Accept-Encoding: gzip, br`, service',
      '',
      '| workload | req/s | server CPU ms per request | bytes per response |',
      '|---|---:|---:|---:|',
      `| (b) plain | ${number(plain.rps)} | ${number(plain.cpuMsPerRequest, 2)} | ${number(plain.bytesPerResponse)} |`,
      `| (b-br) br, quality ${COMPRESSION.brotliQuality} | ${number(compressed.rps)} | ${number(compressed.cpuMsPerRequest, 2)} | ${number(compressed.bytesPerResponse)} |`,
      '',
      `(b-br)/(b): throughput ${ratio(compressed.rps / plain.rps)}, CPU per request ` +
        `${ratio(compressed.cpuMsPerRequest / plain.cpuMsPerRequest)}, bytes per response ` +
        `${ratio(compressed.bytesPerResponse / plain.bytesPerResponse)}. CPU: user and system ` +
        'time of the server process over the measured periods (its thread pool, where zlib ' +
        'runs, included); bytes: headers and body as received.',
      '',
    );
  }
  if (levels) {
    lines.push(
      `Each level on one limit=200 page of companies (${levels.bytes.toLocaleString('en')} bytes), ` +
        'median of the runs, on the runner:',
      '',
      '| coding | level | bytes | ratio | ms |',
      '|---|---:|---:|---:|---:|',
      ...levels.rows.map(
        ({ coding, level, bytes, ms, chosen }) =>
          `| ${coding} | ${level}${chosen ? ' (used)' : ''} | ${bytes.toLocaleString('en')} | ` +
          `${ratio(levels.bytes / bytes)} | ${number(ms, 2)} |`,
      ),
      '',
    );
  }
  return lines;
}
