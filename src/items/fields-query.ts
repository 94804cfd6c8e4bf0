import type { Type } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy } from 'class-validator';
import { RefusedValues } from '../http/refused-values';
import { parseFields, type Selectable, selectableNames, type Selection } from './field-selection';

/** A read's query with `fields`, parsed: none means every field. */
export interface FieldsQuery {
  fields?: Selection;
}

/**
 * A read's query DTO with `fields` (field-selection.ts) added to `Base`'s parameters, parsed and
 * validated from the item's declaration, and its OpenAPI schema: the names as an enumeration.
 */
export function WithFields<B extends object>(
  Base: Type<B>,
  from: Selectable,
): Type<B & FieldsQuery> {
  class Query extends (Base as Type<object>) {}
  const names = selectableNames(from);
  const lists = Object.keys(from.lists).map(
    (list) =>
      `\`${list}\` returns the ${list} whole; \`${list}.<field>\` returns each of them with only ` +
      'the fields named so (and its `id`). ',
  );
  // Decorators apply bottom-up: parse, then optional, then the check that names what is wrong.
  ApiPropertyOptional({
    // An array in `form` style, as the filters: `fields=id,name` (repeating the parameter works too).
    type: 'array',
    items: { type: 'string', enum: names },
    style: 'form',
    explode: false,
    description:
      'The fields to return, comma-separated: each item then has only these, and its `id` ' +
      'always. ' +
      lists.join('') +
      'Default: every field.',
    example: names.slice(0, 3),
  } as Parameters<typeof ApiPropertyOptional>[0])(Query.prototype, 'fields');
  ValidateBy({
    name: 'isFieldSelection',
    validator: {
      validate: (value: unknown) => !(value instanceof RefusedValues),
      // The validation pipe writes each message as an entry of its own (strict-validation.pipe.ts).
      defaultMessage: (args) => (args?.value as RefusedValues).messages.join('; '),
    },
  })(Query.prototype, 'fields');
  IsOptional()(Query.prototype, 'fields');
  Transform(({ value }: { value: unknown }) =>
    value === undefined ? undefined : parseFields(from, value),
  )(Query.prototype, 'fields');
  return Query as Type<B & FieldsQuery>;
}
