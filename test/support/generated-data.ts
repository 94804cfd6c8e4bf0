import fc from 'fast-check';

/*
 * Arbitraries of the property tests' data: ids whose byte order differs from other orders, few
 * distinct scores (so that ties are common), and dates close together (so that `since` cuts
 * between them).
 */

// Upper case before lower case, `_` between them, and characters whose UTF-8 byte order differs
// from JavaScript's UTF-16 order: U+FF5A sorts before U+1F600 in bytes, after it in UTF-16.
const ID_CHARACTERS = [...'AZaz09_-.~', '\u00e9', '\uff5a', '\u{1f600}'];

/** Ids in the contract's order: by the bytes of their UTF-8 encoding (PostgreSQL's "C" collation). */
export function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export const BASE_TIME = Date.parse('2026-02-01T00:00:00.000Z');
const WINDOW_MS = 10 * 86_400_000;

export interface GeneratedRow {
  /** Unique within a data set; the test prefixes it with a tag unique to the run. */
  suffix: string;
  score: number;
  /** Milliseconds after BASE_TIME. */
  at: number;
}

export const score = fc.oneof(
  fc.constantFrom(0, 12.5, 50, 50, 77.25, 99.999, 100),
  fc.integer({ min: 0, max: 100 }),
);

export const idSuffix = fc.string({
  unit: fc.constantFrom(...ID_CHARACTERS),
  minLength: 1,
  maxLength: 4,
});

/** Often the same instant, otherwise anywhere in ten days (milliseconds after BASE_TIME). */
export const instant = fc.oneof(
  fc.constantFrom(0, 1, 86_400_000),
  fc.integer({ min: 0, max: WINDOW_MS }),
);

export const row: fc.Arbitrary<GeneratedRow> = fc.record({ suffix: idSuffix, score, at: instant });

export const rows = (maxLength: number) =>
  fc.uniqueArray(row, { selector: (r) => r.suffix, maxLength });

/** A `since` near the rows: one of their instants, a millisecond either side, or out of range. */
export function sinceAround(data: GeneratedRow[]): fc.Arbitrary<Date> {
  const instants = data.map((r) => BASE_TIME + r.at);
  return fc
    .oneof(
      fc.constantFrom(BASE_TIME - 1, BASE_TIME + WINDOW_MS + 1, ...instants),
      fc
        .tuple(fc.constantFrom(BASE_TIME, ...instants), fc.constantFrom(-1, 1))
        .map(([t, d]) => t + d),
      fc.integer({ min: BASE_TIME, max: BASE_TIME + WINDOW_MS }),
    )
    .map((ms) => new Date(ms));
}

let runs = 0;
/** A prefix unique to one run of a property: ids are unique across all workspaces. */
export function runTag(): string {
  runs += 1;
  return `r${String(runs).padStart(5, '0')}_`;
}
