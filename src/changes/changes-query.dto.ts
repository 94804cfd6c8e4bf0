import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { IsGivenOnce, LimitParameter } from '../http/list-query.dto';
import { CURSOR_SCHEMA } from '../items/signed-cursors';
import { FEED_PAGE_MAX_BYTES } from './change-feed-sql';

// A feed page may be larger than a list page: it is read from one index range, whatever its depth.
export const MAX_CHANGES_LIMIT = 1000;
const DEFAULT_CHANGES_LIMIT = 200;

/** `cursor` and `limit` of both change feeds; checks run bottom-up, as in ListQueryDto. */
export class ChangesQueryDto {
  @ApiPropertyOptional({
    ...CURSOR_SCHEMA,
    description:
      'A `nextCursor` returned by this feed, given at most once. Without it the feed starts at ' +
      'the beginning: every live item as an upsert, then every later change.',
  })
  @IsString()
  @IsGivenOnce()
  @IsOptional()
  cursor?: string;

  @LimitParameter({
    maximum: MAX_CHANGES_LIMIT,
    default: DEFAULT_CHANGES_LIMIT,
    description:
      'Changes per page, at most: a plain decimal integer, given at most once. A page holds ' +
      `fewer when its changes are large (its data stops after ${FEED_PAGE_MAX_BYTES / 1024 / 1024} ` +
      'MiB, `hasMore` then true).',
  })
  limit: number = DEFAULT_CHANGES_LIMIT;
}
