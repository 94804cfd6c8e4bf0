/**
 * Polls `check` until it gives a value (anything but false or undefined) and returns it: a bounded
 * wait for what the test does not control, such as a process coming up or going away or a delivery
 * arriving (no fixed sleep decides anything). After `withinMs` it fails, naming `what` and
 * `detail()` as it is then (a process's output, read at the timeout rather than when the wait
 * began).
 */
export async function until<T>(
  what: string,
  check: () => T | false | undefined | Promise<T | false | undefined>,
  { withinMs = 30_000, detail = () => '' }: { withinMs?: number; detail?: () => string } = {},
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== false && value !== undefined) return value as Exclude<T, false | undefined>;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Timed out waiting for ${what}.\n${detail()}`);
}
