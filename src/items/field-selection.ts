import { RecentlyUsed } from '../common/recently-used';
import { RefusedValues } from '../http/refused-values';
import type { Field } from './fields';

/*
 * `fields`: which of an item's fields a read returns (docs/api.md, "Choosing the fields"). What may
 * be named is derived from the item's field map (company.fields.ts, lead.fields.ts): its fields,
 * and for a list of objects inside the item (a company's contacts) the list's name, for the
 * objects whole, or `list.field`, for each object with only those fields. The id of the item and
 * of each object always comes. From the same declaration derive the validation (parseFields), the
 * OpenAPI enumeration (selectableNames), the SQL (each resource's statements take the Selection)
 * and the client's types (from the OpenAPI document).
 */

/** What a read of an item may select: its fields, and its lists of objects with theirs. */
export interface Selectable {
  fields: Record<string, Field>;
  lists: Record<string, Record<string, Field>>;
}

export function selectable(
  fields: Record<string, Field>,
  lists: Record<string, Record<string, Field>> = {},
): Selectable {
  return { fields, lists };
}

/**
 * A parsed `fields`: the item's fields to return, in the declaration's order, `id` first; and for
 * each list to return, the fields of its objects, in their declaration's order (every field when
 * the list was named whole).
 */
export interface Selection {
  fields: string[];
  lists: Record<string, string[]>;
}

// One message per unknown name, each naming the allowed ones (about 300 bytes), up to this many:
// a query string of thousands of made-up names must not make a 400 of megabytes.
const MAX_UNKNOWN_NAMES_NAMED = 20;

/** Every name `fields` accepts, in the declaration's order: the OpenAPI enumeration. */
export function selectableNames({ fields, lists }: Selectable): string[] {
  return [
    ...Object.keys(fields),
    ...Object.entries(lists).flatMap(([list, listFields]) => [
      list,
      ...Object.keys(listFields).map((field) => `${list}.${field}`),
    ]),
  ];
}

/**
 * A query's `fields` (a string, or an array of them when the parameter was repeated; an array from
 * an MCP tool's arguments), comma-separated names, parsed: the Selection, or what is wrong.
 */
export function parseFields(from: Selectable, raw: unknown): Selection | RefusedValues {
  const given = Array.isArray(raw) ? raw : [raw];
  if (!given.every((value) => typeof value === 'string')) {
    return new RefusedValues(['fields must be text: comma-separated field names']);
  }
  const names = given.flatMap((value) => value.split(',')).map((name) => name.trim());
  const allowed = selectableNames(from);
  const expected = `give one or more of ${allowed.join(', ')}, comma-separated`;
  if (names.includes('')) return new RefusedValues([`fields has an empty name: ${expected}`]);
  const unknown = [...new Set(names.filter((name) => !allowed.includes(name)))];
  if (unknown.length > 0) {
    const messages = unknown
      .slice(0, MAX_UNKNOWN_NAMES_NAMED)
      .map((name) => `fields has an unknown name ${quote(name)}: ${expected}`);
    const more = unknown.length - MAX_UNKNOWN_NAMES_NAMED;
    if (more > 0) messages.push(`fields has ${more} more unknown names`);
    return new RefusedValues(messages);
  }
  const named = new Set(names);
  const lists: Record<string, string[]> = {};
  for (const [list, listFields] of Object.entries(from.lists)) {
    const whole = named.has(list);
    const picked = Object.keys(listFields).filter(
      (field) => whole || field === 'id' || named.has(`${list}.${field}`),
    );
    if (whole || picked.some((field) => named.has(`${list}.${field}`))) lists[list] = picked;
  }
  return {
    fields: Object.keys(from.fields).filter((field) => field === 'id' || named.has(field)),
    lists,
  };
}

/** A selection as one text, the same for the same selection however it was written. */
export function selectionKey({ fields, lists }: Selection): string {
  return [fields.join(','), ...Object.entries(lists).map(([list, f]) => `${list}(${f.join(',')})`)]
    .filter((part) => part !== '')
    .join(';');
}

/** The fields of `fields` that `names` lists, in the map's order. */
export function pickFields<M extends Record<string, Field>>(
  fields: M,
  names: readonly string[],
): Partial<M> {
  return Object.fromEntries(
    Object.entries(fields).filter(([name]) => names.includes(name)),
  ) as Partial<M>;
}

/*
 * Sync jobs and agents ask the same few selections over and over; any client may send any of the
 * 2^24 combinations all the same. What is kept is therefore bounded: a selection's statements
 * weigh about 20 KB of text (measured: a company's feed page statement is 5.7 KB), 64 of them
 * about 1.3 MB per resource; one made again costs microseconds.
 */
const KEPT_SELECTIONS = 64;

/**
 * Statements made per selection: the one without a selection made at start and kept; the others
 * on first use, the KEPT_SELECTIONS used last kept.
 */
export class BySelection<T> {
  /** What a read without `fields` runs: exactly the statements of the whole item. */
  readonly whole: T;
  private readonly kept = new RecentlyUsed<T>(KEPT_SELECTIONS);

  constructor(private readonly make: (selection: Selection | undefined) => T) {
    this.whole = make(undefined);
  }

  for(selection: Selection | undefined): T {
    if (selection === undefined) return this.whole;
    return this.kept.get(selectionKey(selection), () => this.make(selection));
  }
}

/** A value as a message shows it: in quotes, cut, and JSON-escaped so no control character passes. */
function quote(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}
