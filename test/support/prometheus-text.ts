/** Prometheus's text exposition format, as a scrape of /metrics returns it. */

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;

/** The value of the sample `name{labels}` (labels in any order), or undefined if absent. */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = Object.entries(labels);
  for (const line of text.split('\n')) {
    const match = SAMPLE.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (found.size === wanted.length && wanted.every(([k, v]) => found.get(k) === v)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

/** The name of every sample (a histogram's `_bucket`, `_sum` and `_count` each). */
export function sampleNames(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .map((line) => SAMPLE.exec(line)?.[1])
      .filter((name): name is string => name !== undefined),
  );
}
