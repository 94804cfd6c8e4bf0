/**
 * Polls `check` until it holds: a bounded wait while a process comes up or goes away (no fixed
 * sleep decides anything). After `withinMs` it fails, naming `what` and `detail()` as it is then
 * (a process's output, read at the timeout rather than when the wait began).
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  { withinMs = 20_000, detail = () => '' }: { withinMs?: number; detail?: () => string } = {},
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Timed out waiting for ${what}.\n${detail()}`);
}
