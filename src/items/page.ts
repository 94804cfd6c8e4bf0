import { ApiProperty } from '@nestjs/swagger';
import { MAX_LIMIT } from '../http/list-query.dto';

/** The envelope of both lists. */
export interface Page<T> {
  total: number;
  limit: number;
  offset: number;
  data: T[];
}

/**
 * The envelope's fields as the OpenAPI document shows them; each list's page class adds `data`
 * with its item type (decorators cannot take a generic's type).
 */
export abstract class PageDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Items matching the filters (`since` and the list filters), across all pages.',
    example: 1,
  })
  total!: number;

  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: MAX_LIMIT,
    description: 'The page size applied.',
  })
  limit!: number;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The offset applied. Past the end, `data` is empty and `total` still true.',
  })
  offset!: number;
}

// A page holds at most `limit` items. Declared here rather than as a property of the class (each
// list's page class declares `data` with its item type): @nestjs/swagger merges a subclass's
// options for a property into those its parent declared, so every page's `data` has this bound.
ApiProperty({ type: 'array', items: { type: 'object' }, maxItems: MAX_LIMIT })(
  PageDto.prototype,
  'data',
);
