/*
 * Each item's fields are declared once, as a map from the API's field name to its column, kind,
 * bounds and documentation (src/companies/company.fields.ts, src/leads/lead.fields.ts). From it
 * derive: the DTO classes, their types and their OpenAPI schemas (field-dto.ts), the SQL select
 * list that writes the item's JSON (lists, feeds, single reads), the import's checks of each
 * field, the import's upsert, the database's CHECK constraints on the text fields
 * (test/e2e/lists/field-bounds.e2e-spec.ts compares the two), and the bound on a response's size
 * (test/support/response-size.ts). Adding a field is one line of a map.
 */

/** A timestamptz as the contract writes every date-time: ISO 8601 in UTC with milliseconds. */
export function isoDateTime(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** What the OpenAPI document says of a field beyond its kind and bounds (field-dto.ts). */
export interface FieldDoc {
  description?: string;
  example?: unknown;
}

interface FieldBase<Kind extends string> {
  kind: Kind;
  /** The column, in the item's table; or, for a joined field, `alias.column`. */
  column: string;
  /** Written by the import: false for a field read from another table (a lead's companyName). */
  stored: boolean;
  /**
   * Not in an import file: the writer derives it from the other fields (a visit's
   * durationSeconds, pageViewCount, landingPage). Absent: false.
   */
  derived?: boolean;
  doc: FieldDoc;
}

/**
 * Text has a maximum length, in characters (Unicode code points: what PostgreSQL's char_length
 * counts and JSON Schema's maxLength means; an emoji is one). Every text field has one, so that no
 * response can be made arbitrarily large (docs/api.md, "Sizes").
 */
interface TextBase<Kind extends string> extends FieldBase<Kind> {
  maxLength: number;
  /** A form the text must have beyond its length: the OpenAPI `pattern`, and the import's check. */
  form?: TextForm;
}

/** A text's form: a regular expression, and the rule in words for the import's message. */
export interface TextForm {
  pattern: RegExp;
  /** Completes "<field> must ...": `start with / and hold no ? or #`. */
  rule: string;
}

export type TextField = TextBase<'text'>;
export type NullableTextField = TextBase<'nullableText'>;
export type ScoreField = FieldBase<'score'>;
export type CountField = FieldBase<'count'>;
export type NullableCountField = FieldBase<'nullableCount'>;
export type DateTimeField = FieldBase<'dateTime'>;
export interface EnumField<T extends string> extends FieldBase<'enum'> {
  values: readonly T[];
  /** The PostgreSQL enum type, for the import's cast. */
  type: string;
}

export type Field =
  | TextField
  | NullableTextField
  | ScoreField
  | CountField
  | NullableCountField
  | DateTimeField
  | EnumField<string>;

export const text = (
  column: string,
  maxLength: number,
  doc: FieldDoc = {},
  form?: TextForm,
): TextField => ({ kind: 'text', column, maxLength, stored: true, doc, ...(form && { form }) });
export const nullableText = (
  column: string,
  maxLength: number,
  doc: FieldDoc = {},
  form?: TextForm,
): NullableTextField => ({
  kind: 'nullableText',
  column,
  maxLength,
  stored: true,
  doc,
  ...(form && { form }),
});
/** A number from 0 to 100 inclusive (double precision). */
export const score = (column: string, doc: FieldDoc = {}): ScoreField => ({
  kind: 'score',
  column,
  stored: true,
  doc,
});
/** An integer from 0 to 2^31 - 1 (PostgreSQL integer). */
export const count = (column: string, doc: FieldDoc = {}): CountField => ({
  kind: 'count',
  column,
  stored: true,
  doc,
});
/** An integer from 0 to 2^31 - 1, or null when unknown. */
export const nullableCount = (column: string, doc: FieldDoc = {}): NullableCountField => ({
  kind: 'nullableCount',
  column,
  stored: true,
  doc,
});
/** ISO 8601 in UTC with milliseconds in the JSON; timestamptz(3) in the table. */
export const dateTime = (column: string, doc: FieldDoc = {}): DateTimeField => ({
  kind: 'dateTime',
  column,
  stored: true,
  doc,
});
export const oneOf = <T extends string>(
  column: string,
  values: Record<string, T>,
  type: string,
  doc: FieldDoc = {},
): EnumField<T> => ({
  kind: 'enum',
  column,
  values: Object.values(values),
  type,
  stored: true,
  doc,
});
/** A text field read from a joined table (bounded there), not written by the import. */
export const joinedText = (column: string, maxLength: number, doc: FieldDoc = {}): TextField => ({
  kind: 'text',
  column,
  maxLength,
  stored: false,
  doc,
});

/** A field that the writer derives from the others rather than reads from an import file. */
export const derived = <F extends Field>(field: F): F => ({ ...field, derived: true });

/** The text fields an import writes: the columns that the database bounds with a CHECK. */
export function boundedColumns(
  fields: Record<string, Field>,
): { name: string; column: string; maxLength: number }[] {
  return Object.entries(fields).flatMap(([name, field]) =>
    field.stored && (field.kind === 'text' || field.kind === 'nullableText')
      ? [{ name, column: field.column, maxLength: field.maxLength }]
      : [],
  );
}

/** The bound of every id (companies, contacts, leads): see company.fields.ts for the reasons. */
export const ID_MAX_LENGTH = 100;

/**
 * Ids that `GET /v1/companies/{id}` and `GET /v1/leads/{id}` cannot name, refused by the import:
 * `changes`, the change feed's path segment (routes are case-sensitive, so `Changes` is an id like
 * any other), and the dot segments, which URL clients resolve away before sending
 * (`/v1/companies/..` is sent as `/v1/`, and so is `%2E%2E`). Every other id the import accepts
 * is read back with its percent-encoding (encodeURIComponent).
 */
export const RESERVED_IDS: readonly string[] = ['changes', '.', '..'];

/**
 * Whether an id could be one that the import stored: non-empty, at most ID_MAX_LENGTH characters,
 * no NUL (PostgreSQL's text cannot hold it; a query with one fails) and no lone UTF-16 surrogate
 * (the import refuses both). Anything else is the 404 of an unknown id, without a query.
 */
export function isPossibleId(id: string): boolean {
  return isPossibleText(id, ID_MAX_LENGTH);
}

/** Whether a text could be a stored value of at most `maxLength` characters (as for ids above). */
export function isPossibleText(value: string, maxLength: number): boolean {
  return (
    value.length > 0 &&
    !value.includes('\u0000') &&
    value.isWellFormed() &&
    characterCount(value) <= maxLength
  );
}

/** Characters as PostgreSQL's char_length counts them: code points, a surrogate pair being one. */
export function characterCount(value: string): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** The SQL select list of an item's JSON: each column under its API name, in the map's order. */
export function selectList(fields: Record<string, Field>, alias: string): string {
  return Object.entries(fields)
    .map(([name, field]) => {
      const column = field.column.includes('.') ? field.column : `${alias}.${field.column}`;
      const value = field.kind === 'dateTime' ? isoDateTime(column) : column;
      return `${value} AS "${name}"`;
    })
    .join(', ');
}

/** The fields an import writes, each with its column, its array type and its cast. */
export function storedColumns(
  fields: Record<string, Field>,
): { name: string; column: string; arrayType: string; cast: string }[] {
  return Object.entries(fields)
    .filter(([, field]) => field.stored)
    .map(([name, field]) => ({
      name,
      column: field.column,
      arrayType: ARRAY_TYPES[field.kind],
      cast: field.kind === 'enum' ? `::"${field.type}"` : '',
    }));
}

const ARRAY_TYPES: Record<Field['kind'], string> = {
  text: 'text[]',
  nullableText: 'text[]',
  score: 'float8[]',
  count: 'int4[]',
  nullableCount: 'int4[]',
  dateTime: 'timestamptz[]',
  enum: 'text[]',
};

/** A field's value in a response, a DTO's property (field-dto.ts): a date-time is its ISO text. */
export type DtoValue<F extends Field> =
  F extends EnumField<infer T>
    ? T
    : F extends NullableTextField
      ? string | null
      : F extends ScoreField | CountField
        ? number
        : F extends NullableCountField
          ? number | null
          : string;

/** The value a field holds once read from an import file: the same, but dates as Date. */
export type FieldValue<F extends Field> = F extends DateTimeField ? Date : DtoValue<F>;

export type FieldValues<M extends Record<string, Field>> = { [K in keyof M]: FieldValue<M[K]> };
