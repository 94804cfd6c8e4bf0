import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { IsGivenOnce } from '../../http/list-query.dto';
import { CURSOR_SCHEMA } from '../../items/signed-cursors';

/** `cursor` alone: a stream has no page size (any other parameter, `limit` too, is a 400). */
export class ChangeStreamQueryDto {
  @ApiPropertyOptional({
    ...CURSOR_SCHEMA,
    description:
      "A cursor of this feed: a page's `nextCursor` or a stream's checkpoint or last line, given " +
      'at most once. Without it the stream starts at the beginning: every live item as an ' +
      'upsert, then every later change.',
  })
  @IsString()
  @IsGivenOnce()
  @IsOptional()
  cursor?: string;
}
