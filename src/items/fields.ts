import { isoDateTime } from './list-page-sql';

/*
 * Each item's fields are declared once, as a map from the API's field name to its column and
 * kind (src/companies/company.fields.ts, src/leads/lead.fields.ts). The map is typed against the
 * DTO (`satisfies FieldMap<Dto>`), so that a field added to the DTO and not to the map, or of
 * another type, does not compile. From it derive: the SQL select list that writes the item's JSON
 * (lists, feeds, single reads), the import's checks of each field, and the import's upsert.
 */

interface FieldBase<Kind extends string> {
  kind: Kind;
  /** The column, in the item's table; or, for a joined field, `alias.column`. */
  column: string;
  /** Written by the import: false for a field read from another table (a lead's companyName). */
  stored: boolean;
}

export type TextField = FieldBase<'text'>;
export type NullableTextField = FieldBase<'nullableText'>;
export type ScoreField = FieldBase<'score'>;
export type CountField = FieldBase<'count'>;
export type DateTimeField = FieldBase<'dateTime'>;
export interface EnumField<T extends string> extends FieldBase<'enum'> {
  values: readonly T[];
  /** The PostgreSQL enum type, for the import's cast. */
  type: string;
}

/** The field kinds that can hold a value of type T. */
type FieldOf<T> = [T] extends [string]
  ? string extends T
    ? TextField | DateTimeField
    : EnumField<T>
  : [T] extends [number]
    ? ScoreField | CountField
    : [T] extends [string | null]
      ? NullableTextField
      : never;

export type Field =
  TextField | NullableTextField | ScoreField | CountField | DateTimeField | EnumField<string>;

export type FieldMap<Dto> = { [K in keyof Dto]-?: FieldOf<Dto[K]> };

export const text = (column: string): TextField => ({ kind: 'text', column, stored: true });
export const nullableText = (column: string): NullableTextField => ({
  kind: 'nullableText',
  column,
  stored: true,
});
/** A number from 0 to 100 inclusive (double precision). */
export const score = (column: string): ScoreField => ({ kind: 'score', column, stored: true });
/** An integer from 0 to 2^31 - 1 (PostgreSQL integer). */
export const count = (column: string): CountField => ({ kind: 'count', column, stored: true });
/** ISO 8601 in UTC with milliseconds in the JSON; timestamptz(3) in the table. */
export const dateTime = (column: string): DateTimeField => ({
  kind: 'dateTime',
  column,
  stored: true,
});
export const oneOf = <T extends string>(
  column: string,
  values: Record<string, T>,
  type: string,
): EnumField<T> => ({ kind: 'enum', column, values: Object.values(values), type, stored: true });
/** A text field read from a joined table, not written by the import. */
export const joinedText = (column: string): TextField => ({ kind: 'text', column, stored: false });

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
  dateTime: 'timestamptz[]',
  enum: 'text[]',
};

/** The value a field holds once read from an import file: dates as Date. */
export type FieldValue<F extends Field> =
  F extends EnumField<infer T>
    ? T
    : F extends NullableTextField
      ? string | null
      : F extends ScoreField | CountField
        ? number
        : F extends DateTimeField
          ? Date
          : string;

export type FieldValues<M extends Record<string, Field>> = { [K in keyof M]: FieldValue<M[K]> };
