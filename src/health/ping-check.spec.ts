import { HealthIndicatorService } from '@nestjs/terminus';
import { pingCheck } from './ping-check';

describe('pingCheck', () => {
  const health = new HealthIndicatorService();

  afterEach(() => {
    jest.useRealTimers();
  });

  it('is up when the ping succeeds', async () => {
    expect(await pingCheck(health, 'database', () => Promise.resolve('PONG'), 1_000)).toEqual({
      database: { status: 'up' },
    });
  });

  it('is down, with a fixed text, when the ping fails', async () => {
    const failing = () => Promise.reject(new Error('password authentication failed for "app"'));

    expect(await pingCheck(health, 'database', failing, 1_000)).toEqual({
      database: { status: 'down', message: 'unreachable' },
    });
  });

  it('is down once the timeout passes when the ping never answers', async () => {
    jest.useFakeTimers();
    const result = pingCheck(health, 'redis', () => new Promise(() => undefined), 1_000);

    await jest.advanceTimersByTimeAsync(1_000);

    expect(await result).toEqual({
      redis: { status: 'down', message: 'no answer within 1000 ms' },
    });
  });
});
