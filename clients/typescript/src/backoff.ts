/**
 * The wait before retry number `attempt` (0 for the first retry): "equal jitter". Half of the
 * exponential step is fixed, so every wait is longer than the one before (the step doubles), and
 * half is random, so that clients failing together do not come back in lockstep. Capped at maxMs.
 */
export function backoffDelay(
  attempt: number,
  options: { baseMs: number; maxMs: number; random: () => number },
): number {
  const step = Math.min(options.maxMs, options.baseMs * 2 ** attempt);
  return Math.round(step / 2 + options.random() * (step / 2));
}
