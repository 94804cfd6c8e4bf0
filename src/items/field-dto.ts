import type { Type } from '@nestjs/common';
import {
  ApiProperty,
  type ApiPropertyOptions,
  getSchemaPath,
  type SchemaObject,
} from '@nestjs/swagger';
import { ISO_DATE_TIME_LENGTH } from '../http/iso-date-time';
import type { DtoValue, Field, TextForm } from './fields';

export type DtoValues<M extends Record<string, Field>> = { [K in keyof M]: DtoValue<M[K]> };

/** The largest PostgreSQL `integer`, the column of every count. */
const INTEGER_COLUMN_MAX = 2_147_483_647;

/** The OpenAPI schema of one field, from its kind, bounds and documentation. */
export function fieldApiProperty(field: Field): ApiPropertyOptions {
  const { description, example } = field.doc;
  const doc = {
    ...(description !== undefined && { description }),
    ...('example' in field.doc && { example }),
  };
  switch (field.kind) {
    case 'text':
      return { type: String, maxLength: field.maxLength, ...form(field.form), ...doc };
    case 'nullableText':
      // Always present, null when unknown (docs/api.md, "Data conventions").
      return {
        type: String,
        maxLength: field.maxLength,
        ...form(field.form),
        nullable: true,
        ...doc,
      };
    case 'score':
      // Scores are numbers in 0..100 inclusive.
      return { type: 'number', minimum: 0, maximum: 100, ...doc };
    case 'count':
      return { type: 'integer', format: 'int32', minimum: 0, maximum: INTEGER_COLUMN_MAX, ...doc };
    case 'nullableCount':
      return {
        type: 'integer',
        format: 'int32',
        minimum: 0,
        maximum: INTEGER_COLUMN_MAX,
        nullable: true,
        ...doc,
      };
    case 'dateTime':
      // Every date-time of a response: ISO 8601 in UTC with milliseconds and `Z`.
      return { type: String, format: 'date-time', maxLength: ISO_DATE_TIME_LENGTH, ...doc };
    case 'enum':
      // By reference to one component per enumeration (enumName); its values are the Prisma
      // schema's. The text goes in `description`: @nestjs/swagger 11.4 drops `enumSchema`'s.
      return { enum: [...field.values], enumName: field.type, ...doc };
  }
}

/** A text form's `pattern` (fields.ts), as JSON Schema writes it. */
function form(textForm: TextForm | undefined): { pattern?: string } {
  return textForm ? { pattern: textForm.pattern.source } : {};
}

/**
 * A DTO class whose properties are the field map's, in its order, each with its OpenAPI schema:
 * `export class LeadDto extends FieldDto(LEAD_FIELDS) {}`. Properties that are no field (a
 * company's `contacts`) are declared in the subclass as usual.
 */
export function FieldDto<M extends Record<string, Field>>(fields: M): Type<DtoValues<M>> {
  class Dto {}
  for (const [name, field] of Object.entries(fields)) {
    ApiProperty(fieldApiProperty(field))(Dto.prototype, name);
  }
  return Dto as Type<DtoValues<M>>;
}

/**
 * The same DTO for a read with `fields` (items/field-selection.ts): the same properties, each
 * present only when selected, but `id`, always present.
 */
export function SelectedFieldDto<M extends Record<string, Field>>(
  fields: M,
): Type<Partial<DtoValues<M>> & { id: string }> {
  class Dto {}
  for (const [name, field] of Object.entries(fields)) {
    const schema = { ...fieldApiProperty(field), required: name === 'id' } as ApiPropertyOptions;
    ApiProperty(schema)(Dto.prototype, name);
  }
  return Dto as Type<Partial<DtoValues<M>> & { id: string }>;
}

/**
 * An item as a read returns it: whole, or with `fields` only the selected fields. Both schemas
 * must be among the document's models (ApiExtraModels) where this is used.
 */
export function wholeOrSelected(whole: Type<unknown>, selected: Type<unknown>): SchemaObject {
  return { anyOf: [{ $ref: getSchemaPath(whole) }, { $ref: getSchemaPath(selected) }] };
}
