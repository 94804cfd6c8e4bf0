import { Clock } from '../common/clock';
import { FixedWindowThrottlerStorage } from './fixed-window-throttler.storage';

class ManualClock extends Clock {
  // Not aligned on a minute, so that a window aligned on the clock would show.
  private current = Date.parse('2026-03-01T09:00:17.250Z');
  override now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

const TTL = 60_000;
const LIMIT = 3;

describe('FixedWindowThrottlerStorage', () => {
  let clock: ManualClock;
  let storage: FixedWindowThrottlerStorage;
  const hit = (key = 'k') => storage.increment(key, TTL, LIMIT);

  beforeEach(() => {
    clock = new ManualClock();
    storage = new FixedWindowThrottlerStorage(clock);
  });

  it('counts the hits of a window', async () => {
    expect((await hit()).totalHits).toBe(1);
    expect((await hit()).totalHits).toBe(2);
    expect((await hit()).totalHits).toBe(3);
  });

  it('starts the window at the first hit and ends it exactly one ttl later', async () => {
    await hit();
    clock.advance(30_000);
    expect((await hit()).totalHits).toBe(2);
    clock.advance(TTL - 30_000 - 1);
    expect((await hit()).totalHits).toBe(3);
    clock.advance(1);
    expect(await hit()).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('starts the next window at the first hit after the previous one ended, not at its end', async () => {
    await hit();
    clock.advance(TTL + 45_000);
    expect((await hit()).timeToExpire).toBe(60);
    clock.advance(TTL - 1);
    expect((await hit()).totalHits).toBe(2);
    clock.advance(1);
    expect((await hit()).totalHits).toBe(1);
  });

  it('blocks past the limit, until the window ends', async () => {
    for (let i = 1; i <= LIMIT; i++) {
      const record = await hit();
      expect(record.isBlocked).toBe(false);
      expect(record.timeToBlockExpire).toBe(0);
    }
    clock.advance(10_000);
    expect(await hit()).toEqual({
      totalHits: LIMIT + 1,
      timeToExpire: 50,
      isBlocked: true,
      timeToBlockExpire: 50,
    });
    expect((await hit()).isBlocked).toBe(true);
    clock.advance(TTL - 10_000);
    expect((await hit()).isBlocked).toBe(false);
  });

  it.each([
    [0, 60],
    [1, 60],
    [999, 60],
    [1_000, 59],
    [1_001, 59],
    [30_500, 30],
    [58_999, 2],
    [59_000, 1],
    [59_500, 1],
    [59_999, 1],
  ])(
    'gives the time to expire in whole seconds, rounded up and at least 1 (%i ms in: %i s)',
    async (elapsed, seconds) => {
      await hit();
      clock.advance(elapsed);
      const record = await hit();
      expect(record.timeToExpire).toBe(seconds);
      expect(Number.isInteger(record.timeToExpire)).toBe(true);
    },
  );

  it('gives the time left of the window as the block time', async () => {
    for (let i = 0; i < LIMIT; i++) await hit();
    clock.advance(59_500);
    const record = await hit();
    expect(record.isBlocked).toBe(true);
    expect(record.timeToBlockExpire).toBe(1);
  });

  it('keeps one window per key', async () => {
    for (let i = 0; i < LIMIT + 1; i++) await hit('a');
    clock.advance(20_000);
    expect(await hit('b')).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    const a = await hit('a');
    expect(a.totalHits).toBe(LIMIT + 2);
    expect(a.timeToExpire).toBe(40);
  });

  it('counts every one of many concurrent hits', async () => {
    const records = await Promise.all(Array.from({ length: 300 }, () => hit()));
    expect(records.map((r) => r.totalHits).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    expect(records.filter((r) => !r.isBlocked)).toHaveLength(LIMIT);
  });
});
