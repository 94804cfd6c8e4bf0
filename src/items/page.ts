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
    minimum: 0,
    description: 'Items matching the filters (`since` and the list filters), across all pages.',
    example: 1,
  })
  total!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_LIMIT,
    description: 'The page size applied.',
  })
  limit!: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The offset applied. Past the end, `data` is empty and `total` still true.',
  })
  offset!: number;
}
