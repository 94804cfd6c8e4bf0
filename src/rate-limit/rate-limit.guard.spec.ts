import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { RateLimitGuard } from './rate-limit.guard';

const SRC = join(__dirname, '..');

/** The service's own source files (specs and generated code aside), below src/. */
const sourceFiles = () =>
  readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'))
    .filter((file) => !file.startsWith(`generated${sep}`))
    .map((file) => join(SRC, file));

function contextOf(request: object): ExecutionContext {
  const response = { setHeader: jest.fn(), getHeader: jest.fn() };
  return {
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }),
  } as unknown as ExecutionContext;
}

describe('RateLimitGuard', () => {
  const increment = jest.fn(() =>
    Promise.resolve({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 }),
  );
  let guard: RateLimitGuard;

  beforeEach(async () => {
    increment.mockClear();
    const storage = { increment } as unknown as ThrottlerStorage;
    guard = new RateLimitGuard(
      { throttlers: [{ limit: 5, ttl: 60_000 }] },
      storage,
      new Reflector(),
    );
    await guard.onModuleInit();
  });

  it('counts a request with a key, and lets one without a key (a public route) through uncounted', async () => {
    await expect(guard.canActivate(contextOf({ auth: { keyId: 'k1' } }))).resolves.toBe(true);
    expect(increment).toHaveBeenCalledTimes(1);
    await expect(guard.canActivate(contextOf({}))).resolves.toBe(true);
    expect(increment).toHaveBeenCalledTimes(1);
  });

  it("is the only say on a route's limit: no route carries throttler's decorators, which it does not read", () => {
    const decorated = sourceFiles().filter((file) =>
      /^\s*@(SkipThrottle|Throttle)\(/m.test(readFileSync(file, 'utf8')),
    );
    expect(decorated).toEqual([]);
  });
});
