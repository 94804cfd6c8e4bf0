import { quote, RefusedValue } from '../http/query-parameter';
import type { Field } from './fields';
import { keptStatements } from './kept-statements';

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
export function parseFields(from: Selectable, raw: unknown): Selection | RefusedValue {
  const given = Array.isArray(raw) ? raw : [raw];
  if (!given.every((value) => typeof value === 'string')) {
    return new RefusedValue('fields must be text: comma-separated field names');
  }
  const names = given.flatMap((value) => value.split(',')).map((name) => name.trim());
  const allowed = selectableNames(from);
  const expected = `give one or more of ${allowed.join(', ')}, comma-separated`;
  if (names.includes('')) return new RefusedValue(`fields has an empty name: ${expected}`);
  const unknown = [...new Set(names.filter((name) => !allowed.includes(name)))];
  if (unknown.length > 0) {
    const messages = unknown
      .slice(0, MAX_UNKNOWN_NAMES_NAMED)
      .map((name) => `fields has an unknown name ${quote(name)}: ${expected}`);
    const more = unknown.length - MAX_UNKNOWN_NAMES_NAMED;
    if (more > 0) messages.push(`fields has ${more} more unknown names`);
    return new RefusedValue(...messages);
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

/**
 * A resource's statements per selection: the one without a selection made at start and kept; the
 * others on first use, kept with the other statements made from a request (kept-statements.ts).
 */
export class BySelection<T> {
  /** What a read without `fields` runs: exactly the statements of the whole item. */
  readonly whole: T;

  /** `name` tells this resource's statements from another's among those kept (`companies`). */
  constructor(
    private readonly name: string,
    private readonly make: (selection: Selection | undefined) => T,
  ) {
    this.whole = make(undefined);
  }

  for(selection: Selection | undefined): T {
    if (selection === undefined) return this.whole;
    return keptStatements(`${this.name} selected:${selectionKey(selection)}`, () =>
      this.make(selection),
    );
  }
}
