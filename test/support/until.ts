/**
 * Polls `check` until it gives a value (anything but false or undefined) and returns it: a bounded
 * wait for what the test does not control, such as a process coming up or going away or a delivery
 * arriving (no fixed sleep decides anything). `check` runs at once, then every `everyMs`. After
 * `withinMs` it fails, naming `what` and `detail()` as it is then (a process's output, read at the
 * timeout rather than when the wait began). A check that throws ends the wait with its error.
 *
 * The bound is for a test that would otherwise hang, not a measure: on a loaded machine what is
 * waited for may take many times what it takes on a quiet one, so it is well above that.
 */
export async function until<T>(
  what: string,
  check: () => T | false | undefined | Promise<T | false | undefined>,
  {
    withinMs = 30_000,
    everyMs = 50,
    detail = () => '',
  }: { withinMs?: number; everyMs?: number; detail?: () => string } = {},
): Promise<Exclude<T, false | undefined>> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== undefined) return value as Exclude<T, false | undefined>;
    if (Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`Timed out waiting for ${what}.\n${detail()}`);
}
