import { getMetadataStorage } from 'class-validator';

/**
 * The parameter of a query DTO that an unknown name most likely meant to be, if one is close:
 * the same but for case (`Limit`), two edits away or fewer (`limt`, `offest`), or the end of a
 * longer name (`status` for the companies' `crmStatus`). Undefined when none is: the message then
 * names the unknown parameter alone.
 */
export function suggestedParameter(
  dto: abstract new () => unknown,
  unknown: string,
): string | undefined {
  const given = unknown.toLowerCase();
  if (given.length < 3) return undefined;
  const known = [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(dto, '', true, false)
        .map((metadata) => metadata.propertyName),
    ),
  ];
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const lower = name.toLowerCase();
    const distance = lower.endsWith(given) ? 1 : editDistance(given, lower);
    if (distance <= 2 && (best === undefined || distance < best.distance)) {
      best = { name, distance };
    }
  }
  return best?.name;
}

/** Levenshtein's distance: insertions, deletions and substitutions, one each. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
