import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Clock } from '../common/clock';
import { FailOpenThrottlerStorage } from './fail-open-throttler.storage';
import type { ThrottlerStorageRecord } from './fixed-window-throttler.storage';

class ManualClock extends Clock {
  private current = Date.parse('2026-03-01T09:00:00.000Z');
  override now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

type Increment = Parameters<ThrottlerStorage['increment']>;

const SHARED: ThrottlerStorageRecord = {
  totalHits: 7,
  timeToExpire: 42,
  isBlocked: false,
  timeToBlockExpire: 0,
};
const LOCAL: ThrottlerStorageRecord = {
  totalHits: 1,
  timeToExpire: 60,
  isBlocked: false,
  timeToBlockExpire: 0,
};

describe('FailOpenThrottlerStorage', () => {
  let clock: ManualClock;
  let sharedUp: boolean;
  let sharedIncrement: jest.Mock<Promise<ThrottlerStorageRecord>, Increment>;
  let localIncrement: jest.Mock<Promise<ThrottlerStorageRecord>, Increment>;
  let storage: FailOpenThrottlerStorage;
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;
  const hit = () => storage.increment('api-key:k', 60_000, 120, 60_000, 'default');

  beforeEach(() => {
    clock = new ManualClock();
    sharedUp = true;
    sharedIncrement = jest.fn<Promise<ThrottlerStorageRecord>, Increment>(() =>
      sharedUp ? Promise.resolve(SHARED) : Promise.reject(new Error('Connection is closed.')),
    );
    localIncrement = jest.fn<Promise<ThrottlerStorageRecord>, Increment>(() =>
      Promise.resolve(LOCAL),
    );
    storage = new FailOpenThrottlerStorage(
      { increment: sharedIncrement },
      { increment: localIncrement },
      clock,
    );
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('counts in the shared store while it answers', async () => {
    expect(await hit()).toBe(SHARED);
    expect(sharedIncrement).toHaveBeenCalledWith('api-key:k', 60_000, 120, 60_000, 'default');
    expect(localIncrement).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it('counts in the local store when the shared one fails, with the same arguments', async () => {
    sharedUp = false;

    expect(await hit()).toBe(LOCAL);
    expect(localIncrement).toHaveBeenCalledWith('api-key:k', 60_000, 120, 60_000, 'default');
  });

  it('warns once a minute while the shared store fails, not once per request', async () => {
    sharedUp = false;
    for (let i = 0; i < 50; i++) await hit();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toContain('Connection is closed.');

    clock.advance(59_999);
    await hit();
    expect(warn).toHaveBeenCalledTimes(1);

    clock.advance(1);
    await hit();
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('tells its observer of every failure, logged or not (the metrics count them)', async () => {
    const failed = jest.fn();
    storage.observer = { failed };
    sharedUp = false;
    for (let i = 0; i < 5; i++) await hit();
    sharedUp = true;
    await hit();
    expect(failed).toHaveBeenCalledTimes(5);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('goes back to the shared store as soon as it answers, and says so once', async () => {
    sharedUp = false;
    await hit();
    sharedUp = true;

    expect(await hit()).toBe(SHARED);
    expect(await hit()).toBe(SHARED);
    expect(log).toHaveBeenCalledTimes(1);
    expect(localIncrement).toHaveBeenCalledTimes(1);
  });
});
