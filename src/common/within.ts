/** What `within` found: the work's value, or that it took longer than the time given. */
export type Within<T> = { done: true; value: T } | { done: false };

/**
 * The work's outcome if it settles within `ms`, `{ done: false }` otherwise (it goes on, unawaited).
 * A rejection within the time rejects. For what must answer quickly whatever hangs behind it: the
 * readiness probes, and the statements a metrics scrape reads.
 */
export async function within<T>(work: PromiseLike<T>, ms: number): Promise<Within<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Within<T>>((resolve) => {
    timer = setTimeout(() => resolve({ done: false }), ms);
  });
  try {
    return await Promise.race([
      Promise.resolve(work).then((value): Within<T> => ({ done: true, value })),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
