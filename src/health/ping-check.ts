import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { within } from '../common/within';

/** What a ping found: up, or down with a fixed text (the probes are public). */
export type PingOutcome = { status: 'up' } | { status: 'down'; message: string };

/**
 * Up if `ping` succeeds within `timeoutMs`, down otherwise: a dependency that hangs must give a
 * quick 503, not a probe that hangs with it. The server's readiness and the webhook worker's.
 */
export async function pingOutcome(
  ping: () => PromiseLike<unknown>,
  timeoutMs: number,
): Promise<PingOutcome> {
  try {
    const outcome = await within(ping(), timeoutMs);
    return outcome.done
      ? { status: 'up' }
      : { status: 'down', message: `no answer within ${timeoutMs} ms` };
  } catch {
    return { status: 'down', message: 'unreachable' };
  }
}

/** pingOutcome as terminus's check of `key`. */
export async function pingCheck<Key extends string>(
  health: HealthIndicatorService,
  key: Key,
  ping: () => PromiseLike<unknown>,
  timeoutMs: number,
): Promise<HealthIndicatorResult<Key>> {
  const check = health.check(key);
  const outcome = await pingOutcome(ping, timeoutMs);
  return outcome.status === 'up' ? check.up() : check.down(outcome.message);
}
