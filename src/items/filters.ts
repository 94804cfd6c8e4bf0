import type { Type } from '@nestjs/common';
import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy } from 'class-validator';
import { ListQueryDto } from '../http/list-query.dto';
import {
  type EnumField,
  type Field,
  type NullableTextField,
  type ScoreField,
  type TextField,
  characterCount,
  isPossibleText,
} from './fields';

/*
 * The lists' filters, each declared once on a field of the item's field map (COMPANY_FILTERS in
 * src/companies/company.fields.ts, LEAD_FILTERS in src/leads/lead.fields.ts). From it derive: the
 * query parameter's parsing, its 400 message and its OpenAPI schema (FilteredListQuery below), its
 * SQL (filterSql), and the MCP tools' input schema (src/mcp: from the OpenAPI document).
 * Filters combine with AND; the values of one `anyOf` filter with OR.
 */

interface FilterBase<Kind extends string, F extends Field> {
  kind: Kind;
  /** The API name of the field it filters on. */
  fieldName: string;
  field: F;
}

/** One or more values of an enumeration: comma-separated, or the parameter repeated. */
export type AnyOfFilter = FilterBase<'anyOf', EnumField<string>>;
/** A lower bound, inclusive, on a score. */
export type AtLeastFilter = FilterBase<'atLeast', ScoreField>;
/** Exactly this text, as the API serves it (case and accents included). */
export type EqualsFilter = FilterBase<'equals', TextField | NullableTextField>;
/**
 * One or more domains, compared as people write them: case, one leading `www.` and a trailing dot
 * aside (SQL function domain_key, migration 20261201000000_company_lookups), served by an index of
 * the field's domain_key.
 */
export type DomainFilter = FilterBase<'domain', TextField>;
/**
 * A text contained in any of several text fields, case aside (`ILIKE`), every character matched
 * as itself; served by a trigram index of the fields joined by a control character (which the
 * text may not hold, so that no match straddles two fields).
 */
export interface ContainsFilter {
  kind: 'contains';
  fieldNames: string[];
  fields: TextField[];
}

export type Filter = AnyOfFilter | AtLeastFilter | EqualsFilter | DomainFilter | ContainsFilter;
export type Filters = Record<string, Filter>;

/** The names of a field map's fields of one kind. */
type NamesOf<M, F> = { [K in keyof M]: M[K] extends F ? K : never }[keyof M] & string;

export const anyOf = <M extends Record<string, Field>>(
  fields: M,
  name: NamesOf<M, EnumField<string>>,
): AnyOfFilter => ({ kind: 'anyOf', fieldName: name, field: fields[name] as EnumField<string> });
export const atLeast = <M extends Record<string, Field>>(
  fields: M,
  name: NamesOf<M, ScoreField>,
): AtLeastFilter => ({ kind: 'atLeast', fieldName: name, field: fields[name] as ScoreField });
export const equals = <M extends Record<string, Field>>(
  fields: M,
  name: NamesOf<M, TextField | NullableTextField>,
): EqualsFilter => ({
  kind: 'equals',
  fieldName: name,
  field: fields[name] as TextField | NullableTextField,
});

export const anyDomain = <M extends Record<string, Field>>(
  fields: M,
  name: NamesOf<M, TextField>,
): DomainFilter => ({ kind: 'domain', fieldName: name, field: fields[name] as TextField });
export const contains = <M extends Record<string, Field>>(
  fields: M,
  names: NamesOf<M, TextField>[],
): ContainsFilter => ({
  kind: 'contains',
  fieldNames: names,
  fields: names.map((name) => fields[name] as TextField),
});

export type FilterValue<F extends Filter> = F extends AnyOfFilter | DomainFilter
  ? string[]
  : F extends AtLeastFilter
    ? number
    : string;
export type FilterValues<M extends Filters> = { [K in keyof M]?: FilterValue<M[K]> };

/** A parameter's value that is no value of its filter, with the 400's message. */
class RefusedValue {
  constructor(readonly message: string) {}
}

// A score bound: a plain decimal number, as written by people (`70`, `87.5`); not `1e2` or `0x10`.
const DECIMAL_NUMBER = /^\d+(?:\.\d+)?$/;

// A domain as people write it: labels of letters (any script), digits, `-` and `_`, separated by
// dots, perhaps a trailing dot. Not a URL, an address or a wildcard: `https://acme.com`, `a@b.c`.
const DOMAIN = /^(?:[\p{L}\p{M}\p{N}_-]+\.)*[\p{L}\p{M}\p{N}_-]+\.?$/u;
export const MAX_DOMAINS = 100;

// The bounds of a `contains` text: three characters make the one trigram the index can look up.
export const CONTAINS_MIN_LENGTH = 3;
export const CONTAINS_MAX_LENGTH = 200;
// Control characters: never typed in a search, and the separator of the searched fields.
const CONTROL = /\p{Cc}/u;

/** A query value of the filter (a string, or an array when the parameter was repeated), parsed. */
export function parseFilter(name: string, filter: Filter, raw: unknown): unknown {
  // A JSON number (the MCP tools' arguments; a query string has none): written as a person would.
  if (filter.kind === 'atLeast' && typeof raw === 'number' && Number.isFinite(raw)) {
    return raw >= 0 && raw <= 100
      ? raw
      : new RefusedValue(`${name} has an invalid value ${raw}: give a number from 0 to 100`);
  }
  const given = Array.isArray(raw) ? raw : [raw];
  if (!given.every((value) => typeof value === 'string')) {
    return new RefusedValue(`${name} must be text`);
  }
  switch (filter.kind) {
    case 'anyOf': {
      const expected = `one or more of ${filter.field.values.join(', ')}, comma-separated`;
      const values = given.flatMap((value) => value.split(',')).map((value) => value.trim());
      const unknown = values.find((value) => !filter.field.values.includes(value));
      if (unknown === '') return new RefusedValue(`${name} has an empty value: give ${expected}`);
      if (unknown !== undefined) {
        return new RefusedValue(`${name} has an unknown value ${quote(unknown)}: give ${expected}`);
      }
      return [...new Set(values)];
    }
    case 'atLeast': {
      if (given.length > 1) return new RefusedValue(`${name} must be given only once`);
      const [value] = given;
      const bound = DECIMAL_NUMBER.test(value) ? Number(value) : NaN;
      if (!(bound >= 0 && bound <= 100)) {
        return new RefusedValue(
          `${name} has an invalid value ${quote(value)}: give a number from 0 to 100`,
        );
      }
      return bound;
    }
    case 'equals': {
      if (given.length > 1) return new RefusedValue(`${name} must be given only once`);
      const [value] = given;
      const { maxLength } = filter.field;
      // Nothing stored is empty, longer than the field's bound, or holds a NUL or a lone surrogate
      // (which PostgreSQL's text cannot hold): such a value is a mistake, not an empty page.
      if (!isPossibleText(value, maxLength)) {
        return new RefusedValue(
          `${name} has an invalid value ${quote(value)}: give a non-empty text of at most ${maxLength} characters`,
        );
      }
      return value;
    }
    case 'domain': {
      const expected = `give one or more domains such as acme.com, comma-separated, at most ${MAX_DOMAINS}`;
      const values = given.flatMap((value) => value.split(',')).map((value) => value.trim());
      const invalid = values.find(
        (value) => !DOMAIN.test(value) || !isPossibleText(value, filter.field.maxLength),
      );
      if (invalid !== undefined) {
        return new RefusedValue(`${name} has an invalid value ${quote(invalid)}: ${expected}`);
      }
      if (values.length > MAX_DOMAINS) {
        return new RefusedValue(`${name} has ${values.length} values: ${expected}`);
      }
      return [...new Set(values)];
    }
    case 'contains': {
      if (given.length > 1) return new RefusedValue(`${name} must be given only once`);
      const [value] = given;
      const length = characterCount(value);
      if (
        length < CONTAINS_MIN_LENGTH ||
        length > CONTAINS_MAX_LENGTH ||
        !value.isWellFormed() ||
        CONTROL.test(value)
      ) {
        return new RefusedValue(
          `${name} has an invalid value ${quote(value)}: give a text of ` +
            `${CONTAINS_MIN_LENGTH} to ${CONTAINS_MAX_LENGTH} characters, without control characters`,
        );
      }
      return value;
    }
  }
}

/** A value as a message shows it: in quotes, cut, and JSON-escaped so no control character passes. */
function quote(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}

/** The OpenAPI schema of a filter's query parameter. */
function filterApiProperty(filter: Filter): ApiPropertyOptions {
  switch (filter.kind) {
    case 'anyOf':
      return {
        // An array in `form` style: `intentLevel=hot,warm` (repeating the parameter works too).
        type: 'array',
        items: { type: 'string', enum: [...filter.field.values] },
        style: 'form',
        explode: false,
        description:
          `Keeps the items whose \`${filter.fieldName}\` is one of these: ` +
          `${filter.field.values.join(', ')}, comma-separated. Default: no filter.`,
      } as ApiPropertyOptions;
    case 'atLeast':
      return {
        type: 'number',
        minimum: 0,
        maximum: 100,
        description:
          `Keeps the items whose \`${filter.fieldName}\` is at least this (inclusive), ` +
          'a decimal number from 0 to 100, given once. Default: no filter.',
        example: 70,
      };
    case 'equals':
      return {
        type: String,
        minLength: 1,
        maxLength: filter.field.maxLength,
        description:
          `Keeps the items whose \`${filter.fieldName}\` is exactly this text (case and ` +
          'accents included), given once. Default: no filter.',
      };
    case 'domain':
      return {
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: filter.field.maxLength },
        maxItems: MAX_DOMAINS,
        style: 'form',
        explode: false,
        description:
          `Keeps the items whose \`${filter.fieldName}\` is one of these domains, ` +
          `comma-separated (at most ${MAX_DOMAINS}), compared without case, without a leading ` +
          '`www.` and without a trailing dot: `acme.com` finds `www.Acme.com.`. Letters, digits, ' +
          '`-`, `_` and dots; not a URL. Default: no filter.',
        example: ['acme.com'],
      } as ApiPropertyOptions;
    case 'contains': {
      const names = filter.fieldNames.map((fieldName) => `\`${fieldName}\``).join(' or ');
      return {
        type: String,
        minLength: CONTAINS_MIN_LENGTH,
        maxLength: CONTAINS_MAX_LENGTH,
        description:
          `Keeps the items whose ${names} contains this text, case aside; every character ` +
          'is matched as itself (`%`, `_` and `\\` included). ' +
          `${CONTAINS_MIN_LENGTH} to ${CONTAINS_MAX_LENGTH} characters without control ` +
          'characters, given once. Default: no filter.',
        example: 'acme',
      };
    }
  }
}

/**
 * The query DTO of a list with filters: `limit`, `offset`, `since` and one optional parameter per
 * filter, parsed and validated as declared: `class CompanyListQueryDto extends
 * FilteredListQuery(COMPANY_FILTERS) {}`.
 */
export function FilteredListQuery<M extends Filters>(
  filters: M,
): Type<ListQueryDto & FilterValues<M>> {
  class Query extends ListQueryDto {}
  for (const [name, filter] of Object.entries(filters)) {
    // Decorators apply bottom-up: parse, then optional, then the one check that names the value.
    ApiPropertyOptional(filterApiProperty(filter))(Query.prototype, name);
    ValidateBy({
      name: 'isFilterValue',
      validator: {
        validate: (value: unknown) => !(value instanceof RefusedValue),
        defaultMessage: (args) => (args?.value as RefusedValue).message,
      },
    })(Query.prototype, name);
    IsOptional()(Query.prototype, name);
    Transform(({ value }: { value: unknown }) =>
      value === undefined ? undefined : parseFilter(name, filter, value),
    )(Query.prototype, name);
  }
  return Query as Type<ListQueryDto & FilterValues<M>>;
}

/**
 * The filters given in a query, in the declaration's order: their names (which pick the
 * statement's text) and their values (bound as parameters, never spliced into the text).
 */
export function givenFilters(
  filters: Filters,
  query: Record<string, unknown>,
): { names: string[]; values: unknown[] } {
  const names = Object.keys(filters).filter((name) => query[name] !== undefined);
  return { names, values: names.map((name) => query[name]) };
}

/**
 * A filter's SQL, its value bound as `$parameter`: its condition on the item's table, and on the
 * table that counts the items per combination of filtered values (migration list_filters), where
 * a score is counted by whole points: a bound with a fraction also needs `partial`, the rows of
 * its own point that are below it, counted on the item's table and taken off.
 */
export interface FilterSql {
  rows: string;
  /** None for a filter that the counts do not know: `total` then counts the matching rows. */
  counts?: string;
  partial?: string;
}

export function filterSql(filter: Filter, parameter: number): FilterSql {
  const value = `$${parameter}`;
  if (filter.kind === 'contains') {
    // LIKE's `%`, `_` and its escape `\` in the text are escaped, so that each matches itself.
    const escaped = `replace(replace(replace(${value}::text, '\\', '\\\\'), '%', '\\%'), '_', '\\_')`;
    return { rows: `${containsText(filter)} ILIKE ('%' || ${escaped} || '%')` };
  }
  const { column } = filter.field;
  switch (filter.kind) {
    case 'anyOf': {
      const condition = `${column} = ANY(${value}::"${filter.field.type}"[])`;
      return { rows: condition, counts: condition };
    }
    case 'atLeast':
      return {
        rows: `${column} >= ${value}::float8`,
        counts: `${column}_floor >= floor(${value}::float8)`,
        partial: `${column} >= floor(${value}::float8) AND ${column} < ${value}::float8`,
      };
    case 'equals': {
      // A lead without assignee is counted under '', which no value of the filter can be.
      const condition = `${column} = ${value}::text`;
      return { rows: condition, counts: condition };
    }
    case 'domain':
      // Each value through domain_key too, in SQL, so that both sides fold case alike.
      return {
        rows: `domain_key(${column}) = ANY(ARRAY(SELECT domain_key(value) FROM unnest(${value}::text[]) value))`,
      };
  }
}

/**
 * The text a `contains` filter searches: its fields joined by U+001F, which the searched text
 * cannot hold, so that a match lies within one field. The trigram index is on this expression
 * (migration 20261201000000_company_lookups), written alike.
 */
export function containsText(filter: ContainsFilter): string {
  return `(${filter.fields.map((field) => field.column).join(" || E'\\x1f' || ")})`;
}
