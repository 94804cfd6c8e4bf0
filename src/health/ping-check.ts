import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';

/**
 * Up if `ping` succeeds within `timeoutMs`, down otherwise: a dependency that hangs must give a
 * quick 503, not a probe that hangs with it. The reason is a fixed text: the route is public.
 */
export async function pingCheck<Key extends string>(
  health: HealthIndicatorService,
  key: Key,
  ping: () => PromiseLike<unknown>,
  timeoutMs: number,
): Promise<HealthIndicatorResult<Key>> {
  const check = health.check(key);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const outcome = await Promise.race([
      Promise.resolve(ping()).then(() => 'up' as const),
      timedOut,
    ]);
    return outcome === 'up' ? check.up() : check.down(`no answer within ${timeoutMs} ms`);
  } catch {
    return check.down('unreachable');
  } finally {
    clearTimeout(timer);
  }
}
