import type { ApiPropertyOptions } from '@nestjs/swagger';
import { givenTexts, quote, RefusedValue } from '../http/query-parameter';
import { characterCount, isPossibleText } from './fields';

/*
 * Page patterns (docs/visits.md, "Page patterns"): `/pricing` matches that path exactly, byte for
 * byte; `/blog/*` every path that starts with `/blog/`. The visits lists' `page`, the companies
 * list's `visitedPage` and a webhook endpoint's `--pages` take 1 to MAX_PAGE_PATTERNS of them.
 *
 * Each pattern is matched as a half-open range of paths in byte order (the path columns are
 * COLLATE "C", and UTF-8's byte order is code point order), [from, to): a prefix `p` is [p, the
 * first text after every text that starts with p), an exact path `p` is [p, p + U+0001), which
 * holds p alone (no stored text holds NUL). A range is an index range: the page views of a
 * pattern are read from the path index, whichever kind it is.
 */

export const MAX_PAGE_PATTERNS = 10;
/** As long as a path (visit.fields.ts), its `*` included. */
export const MAX_PAGE_PATTERN_LENGTH = 2048;

/** Patterns as given (without repeats), and the path ranges they match. */
export interface PagePatterns {
  patterns: string[];
  /** Each range's first path, inclusive. */
  from: string[];
  /** Each range's end, exclusive. */
  to: string[];
}

/** What is wrong with a pattern, or null for a good one. */
function patternProblem(pattern: string): string | null {
  if (pattern === '') return 'is empty';
  if (!pattern.startsWith('/')) return 'must start with /';
  if (pattern.includes('?') || pattern.includes('#')) {
    return 'must not hold ? or # (paths are stored without their query string and fragment)';
  }
  const star = pattern.indexOf('*');
  if (star !== -1 && star !== pattern.length - 1) return 'may hold * only at its end';
  if (characterCount(pattern) > MAX_PAGE_PATTERN_LENGTH) {
    return `must be at most ${MAX_PAGE_PATTERN_LENGTH} characters`;
  }
  // No stored path holds NUL or a lone surrogate: such a pattern is a mistake, not an empty page.
  if (!isPossibleText(pattern, MAX_PAGE_PATTERN_LENGTH)) return 'holds a character no path has';
  return null;
}

/**
 * A parameter's patterns (comma-separated, or the parameter repeated; nothing around a comma is
 * trimmed, since a space is a character of a path), parsed: the patterns and their ranges, or one
 * message per bad pattern.
 */
export function parsePagePatterns(name: string, raw: unknown): PagePatterns | RefusedValue {
  const given = givenTexts(name, raw);
  if (given instanceof RefusedValue) return given;
  const patterns = [...new Set(given.flatMap((value) => value.split(',')))];
  const problems = patterns.flatMap((pattern) => {
    const problem = patternProblem(pattern);
    return problem === null
      ? []
      : [`${name} has an invalid pattern ${quote(pattern)}: it ${problem}`];
  });
  if (problems.length > 0) return new RefusedValue(...problems);
  if (patterns.length > MAX_PAGE_PATTERNS) {
    return new RefusedValue(
      `${name} has ${patterns.length} patterns: give 1 to ${MAX_PAGE_PATTERNS}, comma-separated`,
    );
  }
  const ranges = patterns.map(pathRange);
  return {
    patterns,
    from: ranges.map(([from]) => from),
    to: ranges.map(([, to]) => to),
  };
}

/** The paths a pattern matches, [from, to) in byte order (see above). */
export function pathRange(pattern: string): [string, string] {
  if (!pattern.endsWith('*')) return [pattern, `${pattern}\u0001`];
  const prefix = pattern.slice(0, -1);
  return [prefix, successor(prefix)];
}

/**
 * The first text after every text that starts with `prefix`: its last character replaced by the
 * next one (a last character that has none is dropped, and the one before it moves instead).
 * Every pattern starts with `/`, which always has a next character.
 */
function successor(prefix: string): string {
  const characters = [...prefix];
  while (characters.length > 0) {
    const last = characters.pop() as string;
    let next = (last.codePointAt(0) as number) + 1;
    if (next === 0xd800) next = 0xe000; // the surrogates are no characters of UTF-8
    if (next <= 0x10ffff) return characters.join('') + String.fromCodePoint(next);
  }
  return '';
}

/** Whether a path matches a pattern: what the SQL ranges compute (a test's oracle, a webhook's filter). */
export function matchesPattern(path: string, pattern: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;
}

/**
 * The SQL condition that a path column lies in one of the ranges bound as `from` and `to` (two
 * text[] parameters): a join over the ranges, each an index range of the column. For a few rows
 * already found (the webhook dispatch's visits); a statement that looks for the page views of a
 * pattern reads them through pathsInRanges instead.
 */
export function pathInRanges(column: string, from: string, to: string): string {
  return `EXISTS (SELECT FROM unnest(${from}::text[], ${to}::text[]) AS range (from_path, to_path)
      WHERE ${column} >= range.from_path COLLATE "C" AND ${column} < range.to_path COLLATE "C")`;
}

/**
 * The rows of `table` (page views, or visited_paths) whose path lies in one of the ranges bound as
 * `from` and `to`, as a FROM item (alias it): each range drives an index range scan of a path
 * index.
 */
export function pathsInRanges(from: string, to: string, table = 'page_views'): string {
  return `(SELECT page_row.* FROM unnest(${from}::text[], ${to}::text[]) AS range (from_path, to_path)
      JOIN ${table} page_row ON page_row.path >= range.from_path COLLATE "C"
        AND page_row.path < range.to_path COLLATE "C")`;
}

/** The OpenAPI schema of a parameter of page patterns. */
export function pagePatternsApiProperty(description: string): ApiPropertyOptions {
  return {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: MAX_PAGE_PATTERN_LENGTH, pattern: '^/' },
    minItems: 1,
    maxItems: MAX_PAGE_PATTERNS,
    style: 'form',
    explode: false,
    description:
      `${description} 1 to ${MAX_PAGE_PATTERNS} page patterns, comma-separated: a path (\`/pricing\`) ` +
      'matches exactly that path, case-sensitively; one ending in `*` (`/blog/*`) every path that ' +
      'starts with what precedes the `*`. No `*` elsewhere, no `?` or `#`, at most ' +
      `${MAX_PAGE_PATTERN_LENGTH} characters each; nothing around a comma is trimmed.`,
    example: ['/pricing', '/demo*'],
  } as ApiPropertyOptions;
}
