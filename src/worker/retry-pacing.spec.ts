import type { Logger } from 'pino';
import { RetryPacing } from './retry-pacing';

function setup(random = () => 1) {
  let now = 0;
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const record =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void =>
      void lines.push({ level, fields, message });
  const logger = { error: record('error'), warn: record('warn'), info: record('info') };
  const pacing = new RetryPacing('webhook dispatch', logger as unknown as Logger, {
    baseMs: 200,
    maxMs: 30_000,
    now: () => now,
    random,
  });
  return { pacing, lines, tick: (ms: number) => (now += ms) };
}

describe('RetryPacing', () => {
  it('waits twice as long after each failure, up to the bound', () => {
    const { pacing } = setup();
    const waits = Array.from({ length: 12 }, () => pacing.failed(new Error('down')));
    expect(waits).toEqual([
      200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 30_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('draws half of each wait at random, so that workers do not retry in step', () => {
    const low = setup(() => 0).pacing;
    const middle = setup(() => 0.5).pacing;
    expect([low.failed(1), low.failed(1), low.failed(1)]).toEqual([100, 200, 400]);
    expect([middle.failed(1), middle.failed(1), middle.failed(1)]).toEqual([150, 300, 600]);
  });

  it('logs the first failure in full, then one line a minute while it lasts', () => {
    const { pacing, lines, tick } = setup();
    const first = new Error('connect ECONNREFUSED');
    pacing.failed(first);
    // An hour of failures at the bound: one try each 30 s.
    for (let i = 0; i < 120; i++) {
      tick(30_000);
      pacing.failed(new Error('connect ECONNREFUSED'));
    }
    expect(lines[0]).toEqual({
      level: 'error',
      fields: { err: first },
      message: 'webhook dispatch failed; retrying with backoff',
    });
    const later = lines.slice(1);
    expect(later).toHaveLength(60);
    expect(later.every((line) => line.level === 'warn' && !('err' in line.fields))).toBe(true);
    expect(later[0]).toEqual({
      level: 'warn',
      fields: { failures: 3, failingForMs: 60_000, error: 'connect ECONNREFUSED' },
      message: 'webhook dispatch still failing; retrying',
    });
  });

  it('logs the recovery once, and starts again from the shortest wait', () => {
    const { pacing, lines, tick } = setup();
    pacing.succeeded();
    expect(lines).toEqual([]);
    pacing.failed(new Error('down'));
    tick(200);
    pacing.failed(new Error('down'));
    tick(400);
    pacing.succeeded();
    pacing.succeeded();
    expect(lines.map((line) => line.level)).toEqual(['error', 'info']);
    expect(lines[1]).toEqual({
      level: 'info',
      fields: { failures: 2, failingForMs: 600 },
      message: 'webhook dispatch recovered',
    });
    expect(pacing.failed(new Error('down again'))).toBe(200);
    expect(lines.map((line) => line.level)).toEqual(['error', 'info', 'error']);
  });
});
