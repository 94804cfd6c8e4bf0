import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { ISO_DATE_TIME_LENGTH } from '../../http/iso-date-time';
import { ID_MAX_LENGTH } from '../../items/fields';
import { CURSOR_SCHEMA } from '../../items/signed-cursors';
import { MAX_CHANGES_LIMIT } from '../changes-query.dto';

const ITEM_ID = { type: String, maxLength: ID_MAX_LENGTH } satisfies ApiPropertyOptions;

const CHANGED_AT = {
  type: String,
  format: 'date-time',
  maxLength: ISO_DATE_TIME_LENGTH,
  description:
    "When the item's latest change was written (the writing transaction's start), ISO 8601 in " +
    'UTC with milliseconds. Informational: the feed is ordered by commit visibility, not by it.',
  example: '2026-11-23T09:30:00.000Z',
};

/** An item deleted (with a company, its contacts and leads): remove it from your copy. */
export class ItemDeletedDto {
  @ApiProperty({ enum: ['delete'], description: 'The item no longer exists.' })
  op!: 'delete';

  @ApiProperty({ ...ITEM_ID, description: 'Identifier of the deleted item.', example: 'co_000001' })
  id!: string;

  @ApiProperty(CHANGED_AT)
  changedAt!: string;
}

/** The fields every upsert has; each feed adds the item under its own name. */
export abstract class ItemUpsertedDto {
  @ApiProperty({
    enum: ['upsert'],
    description: 'The item was created or changed: store it, replacing any copy with this id.',
  })
  op!: 'upsert';

  @ApiProperty({ ...ITEM_ID, description: 'Identifier of the item.', example: 'co_000001' })
  id!: string;

  @ApiProperty(CHANGED_AT)
  changedAt!: string;
}

/** The page fields of both feeds; each feed's page class adds `data` with its item types. */
export abstract class ChangePageDto {
  @ApiProperty({
    ...CURSOR_SCHEMA,
    description:
      'Where to continue: store it (after the page has been applied) and send it as `cursor`. ' +
      'Always present, also on an empty page.',
    example: 'MTIzNDU6Y29fMDAwMDAx.N3q1f0bQ9C4mYw1d9wz2Sg',
  })
  nextCursor!: string;

  @ApiProperty({
    description:
      'true: more changes are already committed, ask again with `nextCursor` (an empty `data` ' +
      'with `hasMore` means they wait for an older transaction to end: ask again shortly). ' +
      'false: caught up; poll later with `nextCursor`.',
  })
  hasMore!: boolean;
}

// A page holds at most `limit` changes; each feed's page class declares `data` with its item
// types, and @nestjs/swagger merges those options into these (as PageDto's, items/page.ts).
ApiProperty({ type: 'array', items: { type: 'object' }, maxItems: MAX_CHANGES_LIMIT })(
  ChangePageDto.prototype,
  'data',
);

/**
 * A checkpoint of a change stream: every change before this line has been sent. Store the cursor
 * once they are applied; a stream cut after it resumes from it (with the stream or the pages).
 */
export class ChangeStreamCheckpointDto {
  @ApiProperty({
    ...CURSOR_SCHEMA,
    description: 'Where to continue once every change before this line is applied.',
    example: 'MTIzNDU6Y29fMDAwMDAx.N3q1f0bQ9C4mYw1d9wz2Sg',
  })
  cursor!: string;
}

/**
 * The last line of a change stream, and only of one that ended normally: a stream without it was
 * cut (resume from its last checkpoint).
 */
export class ChangeStreamEndDto extends ChangeStreamCheckpointDto {
  @ApiProperty({
    description:
      'false: caught up, poll later with `cursor`. true: the stream ended before (its time bound, ' +
      'the instance shutting down, a failure): continue with `cursor` at once.',
  })
  hasMore!: boolean;
}
