import type { Type } from '@nestjs/common';
import type { ApiPropertyOptions } from '@nestjs/swagger';
import { QueryParameter } from '../http/query-parameter';
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
  const lists = Object.entries(from.lists).map(
    ([list, fields]) =>
      `\`${list}\` returns the ${list} whole; \`${list}.<field>\` returns each of them with only ` +
      `the fields named so${'id' in fields ? ' (and its `id`)' : ''}. `,
  );
  QueryParameter({
    parse: (raw) => parseFields(from, raw),
    apiProperty: {
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
    } as ApiPropertyOptions,
  })(Query.prototype, 'fields');
  return Query as Type<B & FieldsQuery>;
}
