import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FieldDto, SelectedFieldDto } from '../../items/field-dto';
import { MAX_PAGES_PER_VISIT, PAGE_VIEW_FIELDS, VISIT_FIELDS } from '../visit.fields';

// Every field, its type, bounds and documentation: the field maps' (visit.fields.ts).
export class PageViewDto extends FieldDto(PAGE_VIEW_FIELDS) {}

const PAGES_ORDER = 'in `viewedAt` order (ties in the order the tracker gave them)';

export class VisitDto extends FieldDto(VISIT_FIELDS) {
  @ApiProperty({
    type: [PageViewDto],
    minItems: 1,
    maxItems: MAX_PAGES_PER_VISIT,
    description: `The pages viewed during the visit, ${PAGES_ORDER}: 1 to ${MAX_PAGES_PER_VISIT}.`,
  })
  pages!: PageViewDto[];
}

/** A page view with the fields that `fields` named as `pages.<field>` (a page view has no id). */
export class SelectedPageViewDto extends SelectedFieldDto(PAGE_VIEW_FIELDS) {}

/** A visit read with `fields`: the fields named, and its id. */
export class SelectedVisitDto extends SelectedFieldDto(VISIT_FIELDS) {
  @ApiPropertyOptional({
    type: [SelectedPageViewDto],
    maxItems: MAX_PAGES_PER_VISIT,
    description:
      'Present when `fields` names `pages` (each page whole) or a `pages.<field>` (each page with ' +
      `just those fields); the same pages, ${PAGES_ORDER}.`,
  })
  pages?: SelectedPageViewDto[];
}
