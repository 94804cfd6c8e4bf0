import { parseIsoDateTime } from '../http/iso-date-time';
import {
  characterCount,
  type Field,
  type FieldValues,
  RESERVED_IDS,
  type TextForm,
} from '../items/fields';

// A count is a PostgreSQL INTEGER.
const MAX_INT4 = 2_147_483_647;
// What PostgreSQL stores and JavaScript prints as a four-digit year: PostgreSQL has no year 0000.
const MIN_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Reads the fields of one record, collecting a message per bad field. Getters return a
 * placeholder for a bad field: the record is then discarded, so the placeholder is never written.
 */
export class FieldChecker {
  readonly problems: string[] = [];
  private readonly record: Record<string, unknown>;
  private readonly invalid = new Set<string>();

  constructor(raw: unknown, allowed: readonly string[]) {
    if (!isObject(raw)) {
      this.record = {};
      this.problems.push('must be a JSON object');
      for (const field of allowed) this.invalid.add(field);
      return;
    }
    this.record = raw;
    for (const field of Object.keys(raw)) {
      if (!allowed.includes(field)) this.problems.push(`${field} is not a field of this record`);
    }
  }

  isValid(field: string): boolean {
    return !this.invalid.has(field);
  }

  /**
   * Every field of an item's field map, each checked by its kind (items/fields.ts); a derived
   * field is not read (the writer makes it).
   */
  read<M extends Record<string, Field>>(map: M): FieldValues<M> {
    const values: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(map)) {
      if (!field.derived) values[name] = this.field(name, field);
    }
    return values as FieldValues<M>;
  }

  private field(name: string, field: Field): unknown {
    switch (field.kind) {
      case 'text':
        return this.text(name, field.maxLength, field.form);
      case 'nullableText':
        return this.nullableText(name, field.maxLength, field.form);
      case 'score':
        return this.score(name);
      case 'count':
        return this.integer(name, 0, MAX_INT4);
      case 'nullableCount':
        return this.nullableInteger(name, 0, MAX_INT4);
      case 'dateTime':
        return this.dateTime(name);
      case 'enum':
        return this.oneOf(name, field.values);
    }
  }

  problem(message: string): void {
    this.problems.push(message);
  }

  /** An item's id that its single-item path can name (RESERVED_IDS). */
  readableId(field: string, id: string, path: string): void {
    if (!this.isValid(field) || !RESERVED_IDS.includes(id)) return;
    const why =
      id === 'changes'
        ? `${path}changes is the change feed`
        : `URL clients resolve ${path}${id} to another path`;
    this.fail(
      field,
      `${field} "${id}" is reserved: ${why}, so the item could not be read`,
      undefined,
    );
  }

  text(field: string, maxLength: number, form?: TextForm): string {
    const value = this.present(field);
    if (value === undefined) return '';
    if (!isText(value)) return this.fail(field, `${field} must be a non-empty string`, '');
    return this.formed(field, this.storable(field, value, maxLength, ''), form, '');
  }

  /** Present, and null when unknown: never omitted (docs/api.md, "Data conventions"). */
  nullableText(field: string, maxLength: number, form?: TextForm): string | null {
    if (!this.presentOrNull(field)) return null;
    const value = this.record[field];
    if (!isText(value))
      return this.fail(field, `${field} must be a non-empty string or null`, null);
    return this.formed(field, this.storable(field, value, maxLength, null), form, null);
  }

  /** The value of a text field that is still valid, checked against its form (if any). */
  private formed<T>(field: string, value: string | T, form: TextForm | undefined, placeholder: T) {
    if (form === undefined || typeof value !== 'string' || !this.isValid(field)) return value;
    if (form.pattern.test(value)) return value;
    return this.fail(field, `${field} must ${form.rule}`, placeholder);
  }

  /**
   * Whether a nullable field holds a value to check: false when it is null, or missing (which is
   * a problem: such a field is never omitted), or already found invalid.
   */
  private presentOrNull(field: string): boolean {
    if (this.invalid.has(field)) return false;
    if (!(field in this.record)) {
      this.fail(field, `${field} is required (null when unknown)`, null);
      return false;
    }
    return this.record[field] !== null;
  }

  /**
   * Text that PostgreSQL stores and gives back unchanged, within its field's bound. A string of
   * JSON can hold what UTF-8 cannot: a lone UTF-16 surrogate (`"\ud800"`), which the driver's
   * encoding would silently turn into U+FFFD, and NUL, which PostgreSQL's text refuses. Every
   * other character a JavaScript string can hold is a Unicode scalar value, which UTF-8 encodes
   * and PostgreSQL (UTF8) stores as it is: no normalization, no other substitution.
   */
  private storable<T>(field: string, value: string, maxLength: number, placeholder: T): string | T {
    if (!value.isWellFormed()) {
      let position = 0;
      for (const character of value) {
        position++;
        const unit = character.charCodeAt(0);
        if (character.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
          return this.fail(
            field,
            `${field} holds a lone UTF-16 surrogate (U+${unit.toString(16).toUpperCase()}, character ${position}), which UTF-8 cannot encode: it would be stored as U+FFFD`,
            placeholder,
          );
        }
      }
    }
    if (value.includes('\u0000')) {
      return this.fail(
        field,
        `${field} must not hold NUL (U+0000), which PostgreSQL text cannot store`,
        placeholder,
      );
    }
    const length = characterCount(value);
    if (length > maxLength) {
      return this.fail(
        field,
        `${field} must be at most ${maxLength} characters (it has ${length})`,
        placeholder,
      );
    }
    return value;
  }

  score(field: string): number {
    const value = this.present(field);
    if (value === undefined) return 0;
    if (typeof value === 'number' && value >= 0 && value <= 100) return value;
    return this.fail(field, `${field} must be a number between 0 and 100`, 0);
  }

  integer(field: string, min: number, max: number): number {
    const value = this.present(field);
    if (value === undefined) return 0;
    if (Number.isInteger(value) && (value as number) >= min && (value as number) <= max) {
      return value as number;
    }
    return this.fail(field, `${field} must be an integer between ${min} and ${max}`, 0);
  }

  nullableInteger(field: string, min: number, max: number): number | null {
    if (!this.presentOrNull(field)) return null;
    const value = this.record[field];
    if (Number.isInteger(value) && (value as number) >= min && (value as number) <= max) {
      return value as number;
    }
    return this.fail(field, `${field} must be an integer between ${min} and ${max}, or null`, null);
  }

  oneOf<T extends string>(field: string, allowed: readonly T[]): T {
    const value = this.present(field);
    if (value === undefined) return allowed[0];
    if (allowed.includes(value as T)) return value as T;
    return this.fail(field, `${field} must be one of ${allowed.join(', ')}`, allowed[0]);
  }

  /** ISO 8601; stored to the millisecond, so a finer fraction would not come back unchanged. */
  dateTime(field: string): Date {
    const value = this.present(field);
    const placeholder = new Date(0);
    if (value === undefined) return placeholder;
    const parsed = typeof value === 'string' ? parseIsoDateTime(value) : null;
    if (!parsed) return this.fail(field, `${field} must be an ISO 8601 date-time`, placeholder);
    if (parsed.getTime() < MIN_INSTANT || parsed.getTime() > MAX_INSTANT) {
      return this.fail(
        field,
        `${field} must be between the years 0001 and 9999 (UTC)`,
        placeholder,
      );
    }
    const fraction = /[.,](\d+)/.exec(value as string)?.[1] ?? '';
    if (/[1-9]/.test(fraction.slice(3))) {
      return this.fail(field, `${field} must not be more precise than milliseconds`, placeholder);
    }
    return parsed;
  }

  array(field: string): unknown[] {
    const value = this.present(field);
    if (value === undefined) return [];
    if (Array.isArray(value)) return value as unknown[];
    return this.fail(field, `${field} must be an array`, []);
  }

  private present(field: string): unknown {
    if (this.invalid.has(field)) return undefined;
    const value = this.record[field];
    if (value === undefined) return this.fail(field, `${field} is required`, undefined);
    return value;
  }

  private fail<T>(field: string, message: string, placeholder: T): T {
    this.invalid.add(field);
    this.problems.push(message);
    return placeholder;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}
