import { ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { ChangesQueryDto } from '../../changes/changes-query.dto';
import { ChangeStreamQueryDto } from '../../changes/stream/change-stream-query.dto';
import { IsOptional, IsString, ValidateBy } from 'class-validator';
import {
  DateTimeParameter,
  DEFAULT_LIMIT,
  IsGivenOnce,
  LimitParameter,
  MAX_LIMIT,
} from '../../http/list-query.dto';
import { NoQueryDto } from '../../http/no-query.dto';
import { givenTexts, QueryParameter, quote, RefusedValue } from '../../http/query-parameter';
import { WithFields } from '../../items/fields-query';
import { isPossibleId } from '../../items/fields';
import { CURSOR_SCHEMA } from '../../items/signed-cursors';
import {
  pagePatternsApiProperty,
  type PagePatterns,
  parsePagePatterns,
} from '../../items/page-patterns';
import { VISIT_PAGE_MAX_BYTES } from '../visits.sql';
import { VISIT_SELECTABLE } from '../visit.fields';

/** Company ids a visits list may name in `companyId`, at most. */
export const MAX_COMPANY_IDS = 100;

/**
 * `companyId`: 1 to MAX_COMPANY_IDS company ids, comma-separated or the parameter repeated, each
 * taken as it is (an id is matched exactly: nothing is trimmed). An id no company can have (empty,
 * too long) is a 400; one that no company of the workspace has matches nothing.
 */
function parseCompanyIds(raw: unknown): string[] | RefusedValue {
  const given = givenTexts('companyId', raw);
  if (given instanceof RefusedValue) return given;
  const ids = [...new Set(given.flatMap((value) => value.split(',')))];
  const invalid = ids.filter((id) => !isPossibleId(id));
  if (invalid.length > 0) {
    return new RefusedValue(
      ...invalid
        .slice(0, 10)
        .map(
          (id) =>
            `companyId has an invalid id ${quote(id)}: give company ids of 1 to 100 characters, comma-separated`,
        ),
    );
  }
  if (ids.length > MAX_COMPANY_IDS) {
    return new RefusedValue(
      `companyId has ${ids.length} ids: give 1 to ${MAX_COMPANY_IDS}, comma-separated`,
    );
  }
  return ids;
}

/** `until`, when given with `since`, comes after it. */
function IsAfterSince(): PropertyDecorator {
  return ValidateBy({
    name: 'isAfterSince',
    validator: {
      validate: (until: unknown, args) => {
        const since = (args?.object as { since?: unknown }).since;
        return !(until instanceof Date && since instanceof Date) || until > since;
      },
      defaultMessage: () => 'until must be after since',
    },
  });
}

/** What both visits lists take: a page of the window, by cursor, with page patterns. */
class VisitWindowQueryDto {
  @LimitParameter({
    maximum: MAX_LIMIT,
    default: DEFAULT_LIMIT,
    description:
      'Visits per page, at most: a plain decimal integer, given at most once. A page holds fewer ' +
      `when its visits are large (its data stops after ${VISIT_PAGE_MAX_BYTES / 1024 / 1024} MiB, ` +
      '`hasMore` then true).',
  })
  limit: number = DEFAULT_LIMIT;

  @ApiPropertyOptional({
    ...CURSOR_SCHEMA,
    description:
      'A `nextCursor` returned by this list, given at most once: the page after it, with the ' +
      'filters sent now. Without it the list starts with the newest visit.',
  })
  @IsString()
  @IsGivenOnce()
  @IsOptional()
  cursor?: string;

  @DateTimeParameter({
    description:
      'Keeps the visits that started at or after this instant (`startedAt` >= `since`). ISO ' +
      '8601, given at most once; a date alone means its midnight UTC, and a date-time without an ' +
      'offset is read as UTC. Default: the start of the retention.',
    example: '2026-11-23T00:00:00Z',
  })
  since?: Date;

  @IsAfterSince()
  @DateTimeParameter({
    description:
      'Keeps the visits that started before this instant (`startedAt` < `until`), after `since`. ' +
      'ISO 8601, given at most once. Default: no bound.',
    example: '2026-11-30T00:00:00Z',
  })
  until?: Date;

  @QueryParameter({
    parse: (raw) => parsePagePatterns('page', raw),
    apiProperty: pagePatternsApiProperty(
      'Keeps the visits with at least one page view matching any of these patterns.',
    ),
  })
  page?: PagePatterns;
}

/** `GET /v1/visits`'s own filter: the visits of some companies. */
class VisitListFilterDto extends VisitWindowQueryDto {
  @QueryParameter({
    parse: parseCompanyIds,
    apiProperty: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 100 },
      minItems: 1,
      maxItems: MAX_COMPANY_IDS,
      style: 'form',
      explode: false,
      description:
        `Keeps the visits of these companies: 1 to ${MAX_COMPANY_IDS} company ids, ` +
        'comma-separated, each matched exactly. Default: every company.',
      example: ['co_000001'],
    } as ApiPropertyOptions,
  })
  companyId?: string[];
}

/** The query of `GET /v1/visits`. */
export class VisitListQueryDto extends WithFields(VisitListFilterDto, VISIT_SELECTABLE) {}

/** The query of `GET /v1/companies/{id}/visits`: the same, the company being the path's. */
export class CompanyVisitListQueryDto extends WithFields(VisitWindowQueryDto, VISIT_SELECTABLE) {}

/** `fields` alone: the query of `GET /v1/visits/{id}`. */
export class VisitQueryDto extends WithFields(NoQueryDto, VISIT_SELECTABLE) {}

/** `cursor`, `limit` and `fields`: the query of `GET /v1/visits/changes`. */
export class VisitChangesQueryDto extends WithFields(ChangesQueryDto, VISIT_SELECTABLE) {}

/** `cursor` and `fields`: the query of `GET /v1/visits/changes/stream`. */
export class VisitChangeStreamQueryDto extends WithFields(ChangeStreamQueryDto, VISIT_SELECTABLE) {}
