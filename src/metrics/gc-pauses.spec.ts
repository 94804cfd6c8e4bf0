import { constants } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { registerGcPauses } from './gc-pauses';

const entry = (ms: number, kind: number) => ({ duration: ms, detail: { kind } });

async function valueOf(registry: Registry, line: string): Promise<number> {
  const text = await registry.metrics();
  const found = text.split('\n').find((candidate) => candidate.startsWith(`${line} `));
  return Number(found?.slice(line.length + 1));
}

describe('registerGcPauses', () => {
  it('records every pause of a batch, by kind, and the longest since the last scrape', async () => {
    const registry = new Registry();
    const pauses = registerGcPauses(registry, 'x_');
    const { NODE_PERFORMANCE_GC_MINOR: minor, NODE_PERFORMANCE_GC_MAJOR: major } = constants;
    // One batch of three, as the observer is given them when collections follow each other.
    pauses.record([entry(2, minor), entry(40, major), entry(3, minor)]);

    expect(await valueOf(registry, 'x_gc_pause_seconds_count{kind="minor"}')).toBe(2);
    expect(await valueOf(registry, 'x_gc_pause_seconds_count{kind="major"}')).toBe(1);
    expect(await valueOf(registry, 'x_gc_pause_seconds_sum{kind="minor"}')).toBeCloseTo(0.005);
    expect(await valueOf(registry, 'x_gc_pause_seconds_bucket{le="0.05",kind="major"}')).toBe(1);
    expect(await valueOf(registry, 'x_gc_pause_seconds_bucket{le="0.025",kind="major"}')).toBe(0);
    // The scrapes above reset the longest: it is read once, then 0 until the next pause.
    pauses.record([entry(7, minor)]);
    expect(await valueOf(registry, 'x_gc_pause_max_seconds')).toBeCloseTo(0.007);
    expect(await valueOf(registry, 'x_gc_pause_max_seconds')).toBe(0);
  });
});
