import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { MAX_LIMIT } from '../../http/list-query.dto';
import { wholeOrSelected } from '../../items/field-dto';
import { CURSOR_SCHEMA } from '../../items/signed-cursors';
import { VISIT_PAGE_MAX_BYTES } from '../visits.sql';
import { SelectedVisitDto, VisitDto } from './visit.dto';

/** A page of `GET /v1/visits` or `GET /v1/companies/{id}/visits`. */
@ApiExtraModels(VisitDto, SelectedVisitDto)
export class VisitPageDto {
  @ApiProperty({
    type: 'array',
    items: wholeOrSelected(VisitDto, SelectedVisitDto),
    maxItems: MAX_LIMIT,
    description:
      'The visits of the page, newest first: `startedAt` descending, ties by `id` descending. At ' +
      `most \`limit\`, and fewer when they are large (the data stops after ${VISIT_PAGE_MAX_BYTES / 1024 / 1024} ` +
      'MiB, `hasMore` then true). With `fields`, each with only those fields (and its `id`).',
  })
  data!: (VisitDto | SelectedVisitDto)[];

  @ApiProperty({
    ...CURSOR_SCHEMA,
    nullable: true,
    description:
      'Where the next page starts: send it as `cursor` with the same filters. A string exactly ' +
      'when `hasMore` is true, else null.',
    example: 'MjAyNi0xMS0zMFQxNDowMjoxMS4wMDBaOnZpXzAwMDAwMQ.t0y5B8yV2fGq1c3JpX9a6Q',
  })
  nextCursor!: string | null;

  @ApiProperty({ description: 'Whether more visits follow this page.' })
  hasMore!: boolean;
}
