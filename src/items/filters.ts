import type { Type } from '@nestjs/common';
import type { ApiPropertyOptions } from '@nestjs/swagger';
import { DateTimeParameter, ListQueryDto } from '../http/list-query.dto';
import { applyDecorators } from '@nestjs/common';
import { ValidateBy } from 'class-validator';
import {
  givenOnce,
  givenTexts,
  QueryParameter,
  quote,
  RefusedValue,
} from '../http/query-parameter';
import {
  type EnumField,
  type Field,
  type NullableTextField,
  type ScoreField,
  type TextField,
  characterCount,
  isPossibleText,
} from './fields';
import {
  pagePatternsApiProperty,
  type PagePatterns,
  parsePagePatterns,
  pathsInRanges,
} from './page-patterns';

/*
 * The lists' filters, each declared once on a field of the item's field map (COMPANY_FILTERS in
 * src/companies/company.fields.ts, LEAD_FILTERS in src/leads/lead.fields.ts). Its kind's entry of
 * FILTER_KINDS below gives the query parameter's parsing and 400 messages, its OpenAPI schema and
 * its SQL; FilteredListQuery declares the parameters (http/query-parameter.ts), and the MCP tools'
 * input schema follows (src/mcp: from the OpenAPI document). Filters combine with AND; the values
 * of one `anyOf` filter with OR.
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

/**
 * The items whose company has a page view matching one of 1 to 10 page patterns (items/page-
 * patterns.ts) at or after the companion parameter `since` names (`visitedSince`: default
 * `sinceDefaultDays` before the request), within the visits' retention: read from visited_paths,
 * each company's latest view of each path (an index range per pattern), and for a window that
 * starts within a day of the retention's start, from the page views of that day too.
 * `companyColumn` is the company's id in the item's table, qualified (`companies.id`).
 */
export interface VisitedPageFilter {
  kind: 'visitedPage';
  since: string;
  sinceDefaultDays: number;
  companyColumn: string;
  /** The variant for a window that starts within a day of the retention's start (see below). */
  early?: boolean;
}

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

export const visitedPage = (
  companyColumn: string,
  since: string,
  sinceDefaultDays: number,
): VisitedPageFilter => ({ kind: 'visitedPage', since, sinceDefaultDays, companyColumn });

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

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
  /**
   * A filter that the counts do not know but whose matches a table of its own holds (visitedPage:
   * visited_paths): `ids` selects the matching items' `column` values (`company_id`), once
   * each, and `count` counts them: the total when it is the only filter. `rows` is then a probe
   * of that table per item, which a page walks the order index with when many items match.
   */
  found?: { column: string; ids: string; count: string };
}

/** What a list read knows besides its query: the visits' retention (visitedPage). */
export interface ListContext {
  visitRetentionDays: number;
}

/**
 * What a kind of filter is made of: its parameter's parsing, its OpenAPI schema, its SQL. A kind
 * bound as more than one parameter (`bind`) says how many (`arity`): its SQL gets each.
 */
interface FilterKind<F, V> {
  /** A query value of the filter (see QueryParameterDeclaration.parse), parsed or refused. */
  parse(name: string, filter: F, raw: unknown): V | RefusedValue;
  apiProperty(filter: F): ApiPropertyOptions;
  /** Its SQL (FilterSql), its values bound as `values` (parameters: `$5`, `$6`...). */
  sql(filter: F, ...values: string[]): FilterSql;
  /** The parameters bound, `arity` of them (default: the value alone). */
  arity?: number;
  bind?(filter: F, value: V, query: Record<string, unknown>, context: ListContext): unknown[];
  /** Parameters of the query that go with the filter's own (visitedPage's visitedSince). */
  companions?(name: string, filter: F): Record<string, PropertyDecorator>;
  /** The answer depends on the time of the request too, not only on the data (body ETags). */
  timed?: boolean;
  /**
   * A variant of the filter's SQL that this value needs (another statement text, named
   * `name@variant`), or undefined for its plain SQL; `withVariant` gives the declaration of it.
   */
  variant?(
    filter: F,
    value: V,
    query: Record<string, unknown>,
    context: ListContext,
  ): string | undefined;
  withVariant?(filter: F, variant: string): F;
}

/** Each kind of filter: its declaration, and the value its parameter parses into. */
interface Kinds {
  anyOf: { filter: AnyOfFilter; value: string[] };
  atLeast: { filter: AtLeastFilter; value: number };
  equals: { filter: EqualsFilter; value: string };
  domain: { filter: DomainFilter; value: string[] };
  contains: { filter: ContainsFilter; value: string };
  visitedPage: { filter: VisitedPageFilter; value: PagePatterns };
}

export type Filter = Kinds[keyof Kinds]['filter'];
export type Filters = Record<string, Filter>;
export type FilterValue<F extends Filter> = Kinds[F['kind']]['value'];
export type FilterValues<M extends Filters> = { [K in keyof M]?: FilterValue<M[K]> };

/** The values of a multi-value parameter: comma-separated, or the parameter repeated. */
const commaSeparated = (given: string[]) =>
  given.flatMap((value) => value.split(',')).map((value) => value.trim());

/** The kinds of filter, one entry each: a new kind is a declaration type above and an entry here. */
const FILTER_KINDS: { [K in keyof Kinds]: FilterKind<Kinds[K]['filter'], Kinds[K]['value']> } = {
  anyOf: {
    parse(name, filter, raw) {
      const given = givenTexts(name, raw);
      if (given instanceof RefusedValue) return given;
      const expected = `one or more of ${filter.field.values.join(', ')}, comma-separated`;
      const values = commaSeparated(given);
      const unknown = values.find((value) => !filter.field.values.includes(value));
      if (unknown === '') return new RefusedValue(`${name} has an empty value: give ${expected}`);
      if (unknown !== undefined) {
        return new RefusedValue(`${name} has an unknown value ${quote(unknown)}: give ${expected}`);
      }
      return [...new Set(values)];
    },
    apiProperty: (filter) =>
      ({
        // An array in `form` style: `intentLevel=hot,warm` (repeating the parameter works too).
        type: 'array',
        items: { type: 'string', enum: [...filter.field.values] },
        style: 'form',
        explode: false,
        description:
          `Keeps the items whose \`${filter.fieldName}\` is one of these: ` +
          `${filter.field.values.join(', ')}, comma-separated. Default: no filter.`,
      }) as ApiPropertyOptions,
    sql({ field }, value) {
      const condition = `${field.column} = ANY(${value}::"${field.type}"[])`;
      return { rows: condition, counts: condition };
    },
  },
  atLeast: {
    parse(name, _filter, raw) {
      // A JSON number (the MCP tools' arguments; a query string has none): written as a person would.
      if (typeof raw === 'number' && Number.isFinite(raw)) {
        return raw >= 0 && raw <= 100
          ? raw
          : new RefusedValue(`${name} has an invalid value ${raw}: give a number from 0 to 100`);
      }
      const value = givenOnce(name, raw);
      if (value instanceof RefusedValue) return value;
      const bound = DECIMAL_NUMBER.test(value) ? Number(value) : NaN;
      if (!(bound >= 0 && bound <= 100)) {
        return new RefusedValue(
          `${name} has an invalid value ${quote(value)}: give a number from 0 to 100`,
        );
      }
      return bound;
    },
    apiProperty: (filter) => ({
      type: 'number',
      minimum: 0,
      maximum: 100,
      description:
        `Keeps the items whose \`${filter.fieldName}\` is at least this (inclusive), ` +
        'a decimal number from 0 to 100, given once. Default: no filter.',
      example: 70,
    }),
    sql: ({ field: { column } }, value) => ({
      rows: `${column} >= ${value}::float8`,
      counts: `${column}_floor >= floor(${value}::float8)`,
      partial: `${column} >= floor(${value}::float8) AND ${column} < ${value}::float8`,
    }),
  },
  equals: {
    parse(name, filter, raw) {
      const value = givenOnce(name, raw);
      if (value instanceof RefusedValue) return value;
      const { maxLength } = filter.field;
      // Nothing stored is empty, longer than the field's bound, or holds a NUL or a lone surrogate
      // (which PostgreSQL's text cannot hold): such a value is a mistake, not an empty page.
      if (!isPossibleText(value, maxLength)) {
        return new RefusedValue(
          `${name} has an invalid value ${quote(value)}: give a non-empty text of at most ${maxLength} characters`,
        );
      }
      return value;
    },
    apiProperty: (filter) => ({
      type: String,
      minLength: 1,
      maxLength: filter.field.maxLength,
      description:
        `Keeps the items whose \`${filter.fieldName}\` is exactly this text (case and ` +
        'accents included), given once. Default: no filter.',
    }),
    sql({ field }, value) {
      // A lead without assignee is counted under '', which no value of the filter can be.
      const condition = `${field.column} = ${value}::text`;
      return { rows: condition, counts: condition };
    },
  },
  domain: {
    parse(name, filter, raw) {
      const given = givenTexts(name, raw);
      if (given instanceof RefusedValue) return given;
      const expected = `give one or more domains such as acme.com, comma-separated, at most ${MAX_DOMAINS}`;
      const values = commaSeparated(given);
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
    },
    apiProperty: (filter) =>
      ({
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
      }) as ApiPropertyOptions,
    // Each value through domain_key too, in SQL, so that both sides fold case alike.
    sql: ({ field }, value) => ({
      rows: `domain_key(${field.column}) = ANY(ARRAY(SELECT domain_key(value) FROM unnest(${value}::text[]) value))`,
    }),
  },
  contains: {
    parse(name, _filter, raw) {
      const value = givenOnce(name, raw);
      if (value instanceof RefusedValue) return value;
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
    },
    apiProperty(filter) {
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
    },
    sql(filter, value) {
      // LIKE's `%`, `_` and its escape `\` in the text are escaped, so that each matches itself.
      const escaped = `replace(replace(replace(${value}::text, '\\', '\\\\'), '%', '\\%'), '_', '\\_')`;
      return { rows: `${containsText(filter)} ILIKE ('%' || ${escaped} || '%')` };
    },
  },

  visitedPage: {
    parse: (name, _filter, raw) => parsePagePatterns(name, raw),
    apiProperty: (filter) =>
      pagePatternsApiProperty(
        'Keeps the companies with at least one page view matching any of these patterns at or ' +
          `after \`${filter.since}\`. Needs the \`visits:read\` scope. Default: no filter.`,
      ),
    // The ranges' two arrays, the instant from which a page view counts, and the retention.
    arity: 4,
    bind: (filter, patterns, query, context) => [
      patterns.from,
      patterns.to,
      query[filter.since] ?? null,
      context.visitRetentionDays,
    ],
    sql({ sinceDefaultDays, companyColumn, early }, from, to, since, retention) {
      const counted = `coalesce(${since}::timestamptz, now() - interval '${sinceDefaultDays} days')`;
      const retained = `now() - make_interval(days => ${retention}::integer)`;
      // visited_paths answers for the page views from `edge` on: a page view's visit started at
      // most 24 hours before it, so such a view's visit is within the retention. Those before
      // (a window that starts within a day of the retention's start: the `early` variant) are
      // read from the page views; the other variant's text names no page view, since planning
      // their months is most of such a statement's planning.
      const edge = `(${retained} + interval '24 hours')`;
      const seen = pathsInRanges(from, to, 'visited_paths');
      const earlyViews = `${pathsInRanges(from, to)} page
        WHERE page.workspace_id = $1 AND page.viewed_at >= ${counted}
          AND page.viewed_at < ${edge} AND page.visit_started_at >= ${retained}
          AND page.visit_started_at < ${edge}`;
      // OFFSET 0 keeps each probe a probe: one lookup of the item's company, never a hash of
      // every company that viewed the page. The company ids of visits are in the database's
      // collation, the companies' own in "C": compared in the key's, so that the key serves it.
      const company = `${companyColumn} COLLATE "default"`;
      const probe = `EXISTS (SELECT FROM ${seen} seen
        WHERE seen.workspace_id = $1 AND seen.company_id = ${company}
          AND seen.last_viewed_at >= greatest(${counted}, ${edge}) OFFSET 0)`;
      const found = `SELECT DISTINCT seen.company_id FROM ${seen} seen
      WHERE seen.workspace_id = $1 AND seen.last_viewed_at >= greatest(${counted}, ${edge})`;
      if (early === true) {
        const ids = `${found}
    UNION
    SELECT page.company_id FROM ${earlyViews}`;
        return {
          rows: `(${probe}
      OR EXISTS (SELECT FROM ${earlyViews} AND page.company_id = ${company} OFFSET 0))`,
          found: { column: companyColumn, ids, count: `(SELECT count(*) FROM (${ids}) found)` },
        };
      }
      // One exact path has one row per company: counted from the index alone, without a union.
      const onePath =
        `cardinality(${from}::text[]) = 1 ` +
        `AND (${to}::text[])[1] = (${from}::text[])[1] || E'\\x01'`;
      const count = `CASE WHEN ${onePath} THEN (SELECT count(*) FROM visited_paths seen
        WHERE seen.workspace_id = $1 AND seen.path = (${from}::text[])[1]
          AND seen.last_viewed_at >= greatest(${counted}, ${edge}))
      ELSE (SELECT count(*) FROM (${found}) found) END`;
      return { rows: probe, found: { column: companyColumn, ids: found, count } };
    },
    // A window from within a day (and an hour, for the clocks of the service and the database)
    // of the retention's start: the early variant.
    variant: (filter, _patterns, query, context) => {
      const now = Date.now();
      const since = query[filter.since];
      const start =
        since instanceof Date ? since.getTime() : now - filter.sinceDefaultDays * DAY_MS;
      const edge = now - context.visitRetentionDays * DAY_MS + DAY_MS;
      return start < edge + HOUR_MS ? 'early' : undefined;
    },
    withVariant: (filter, variant) => ({ ...filter, early: variant === 'early' }),
    companions: (name, filter) => ({
      [filter.since]: applyDecorators(
        ValidateBy({
          name: 'isWithFilter',
          validator: {
            validate: (_value: unknown, args) =>
              (args?.object as Record<string, unknown>)[name] !== undefined,
            defaultMessage: () => `${filter.since} needs ${name}: give the pages it is about`,
          },
        }),
        DateTimeParameter({
          description:
            `The instant from which a page view counts for \`${name}\` (inclusive). ISO 8601, ` +
            `given at most once, with \`${name}\` only. Default: ${filter.sinceDefaultDays} days ` +
            'before the request.',
          example: '2026-11-23T00:00:00Z',
        }),
      ),
    }),
    timed: true,
  },
};

/** The entry of a filter's kind. */
const kindOf = <F extends Filter>(filter: F) =>
  FILTER_KINDS[filter.kind] as unknown as FilterKind<F, FilterValue<F>>;

/** A query value of the filter (a string, or an array when the parameter was repeated), parsed. */
export function parseFilter<F extends Filter>(
  name: string,
  filter: F,
  raw: unknown,
): FilterValue<F> | RefusedValue {
  return kindOf(filter).parse(name, filter, raw);
}

/**
 * The filters' SQL (FilterSql), in order, their values bound from `$first` on: each filter takes
 * as many parameters as its kind binds.
 */
export function filtersSql(filters: Filter[], first: number): { sql: FilterSql[]; next: number } {
  let next = first;
  const sql = filters.map((filter) => {
    const kind = kindOf(filter);
    const values = Array.from({ length: kind.arity ?? 1 }, () => `$${next++}`);
    return kind.sql(filter, ...values);
  });
  return { sql, next };
}

/** The values a filter binds for its parsed value (in filtersSql's order). */
function bindFilter(
  filter: Filter,
  value: unknown,
  query: Record<string, unknown>,
  context: ListContext,
): unknown[] {
  const kind = kindOf(filter);
  return kind.bind ? kind.bind(filter, value as never, query, context) : [value];
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
    QueryParameter({
      parse: (raw) => parseFilter(name, filter, raw),
      apiProperty: kindOf(filter).apiProperty(filter),
    })(Query.prototype, name);
    const companions = kindOf(filter).companions?.(name, filter) ?? {};
    for (const [companion, decorator] of Object.entries(companions)) {
      decorator(Query.prototype, companion);
    }
  }
  return Query as Type<ListQueryDto & FilterValues<M>>;
}

/**
 * The filters given in a query, in the declaration's order: their names (which pick the
 * statement's text), their values (bound as parameters, never spliced into the text), and whether
 * the answer depends on the time of the request (a `timed` kind).
 */
export function givenFilters(
  filters: Filters,
  query: Record<string, unknown>,
  context: ListContext,
): { names: string[]; values: unknown[]; timed: boolean } {
  const given = Object.keys(filters).filter((name) => query[name] !== undefined);
  return {
    names: given.map((name) => {
      const kind = kindOf(filters[name]);
      const variant = kind.variant?.(filters[name], query[name] as never, query, context);
      return variant === undefined ? name : `${name}@${variant}`;
    }),
    values: given.flatMap((name) => bindFilter(filters[name], query[name], query, context)),
    timed: given.some((name) => kindOf(filters[name]).timed === true),
  };
}

/** The declarations of filters named as givenFilters names them (`name` or `name@variant`). */
export function namedFilters(filters: Filters, names: string[]): Filter[] {
  return names.map((named) => {
    const [name, variant] = named.split('@');
    const filter = filters[name];
    const kind = kindOf(filter);
    return variant === undefined || kind.withVariant === undefined
      ? filter
      : kind.withVariant(filter, variant);
  });
}

/**
 * The text a `contains` filter searches: its fields joined by U+001F, which the searched text
 * cannot hold, so that a match lies within one field. The trigram index is on this expression
 * (migration 20261201000000_company_lookups), written alike.
 */
export function containsText(filter: ContainsFilter): string {
  return `(${filter.fields.map((field) => field.column).join(" || E'\\x1f' || ")})`;
}
