import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsDate, IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';
import { ISO_DATE_TIME_MAX_LENGTH, parseIsoDateTime } from './iso-date-time';

// Query values arrive as strings, or as arrays when a parameter is repeated. Only plain decimal
// integers become numbers: Number() would accept '', '1e2', '0x10' and ' 7 '. A negative one
// becomes a number too, so that the bounds say what is wrong with it ("offset must not be less
// than 0"); `-0` stays text, refused as not an integer, since it would pass the bounds.
const DECIMAL_INTEGER = /^-?\d+$/;

// Stated once for the validation below and for the OpenAPI document.
export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

export function toInteger({ value }: { value: unknown }): unknown {
  if (typeof value !== 'string' || !DECIMAL_INTEGER.test(value)) return value;
  const number = Number(value);
  return Object.is(number, -0) ? value : number;
}

// PostgreSQL has no year 0 (ISO 8601's 0000 is 1 BC) and nothing stored is earlier than this, so
// an earlier `since` filters exactly like it.
const EARLIEST_STORED = new Date('0001-01-01T00:00:00.000Z');
// An offset's `+` sent unencoded arrives as a space (form encoding): read it as the `+` it was.
const SPACE_FOR_PLUS_OFFSET = / (\d{2}(?::?\d{2})?)$/;

function toDate({ value }: { value: unknown }): unknown {
  if (typeof value !== 'string') return value;
  const date = parseIsoDateTime(value.replace(SPACE_FOR_PLUS_OFFSET, '+$1'));
  if (!date) return value;
  return date < EARLIEST_STORED ? EARLIEST_STORED : date;
}

/** A parameter given more than once (`limit=1&limit=2`) is refused rather than guessed at. */
export function IsGivenOnce(): PropertyDecorator {
  return ValidateBy({
    name: 'isGivenOnce',
    validator: {
      validate: (value: unknown) => !Array.isArray(value),
      defaultMessage: (args) => `${args?.property} must be given only once`,
    },
  });
}

/**
 * An optional date-time parameter (`since`), described by `doc`: ISO 8601, given at most once, an
 * offset's `+` read as such when it arrived as a space; refused as "<name> must be an ISO 8601
 * date-time". Applied as a stack of decorators would be, bottom line first: parsed, skipped when
 * absent, given once, then a date.
 */
export function DateTimeParameter(doc: {
  description: string;
  example: string;
}): PropertyDecorator {
  return applyDecorators(
    Transform(toDate),
    IsOptional(),
    IsGivenOnce(),
    IsDate({ message: ({ property }) => `${property} must be an ISO 8601 date-time` }),
    ApiPropertyOptional({
      type: String,
      format: 'date-time',
      maxLength: ISO_DATE_TIME_MAX_LENGTH,
      ...doc,
    }),
  );
}

/**
 * A page size parameter: a plain decimal integer from 1 to `maximum`, given at most once, `value`
 * when absent (the property's initializer). Checks run bottom-up: given once, an integer, the
 * bounds.
 */
export function LimitParameter(doc: {
  maximum: number;
  default: number;
  description: string;
}): PropertyDecorator {
  return applyDecorators(
    Transform(toInteger),
    IsGivenOnce(),
    IsInt({ message: ({ property }) => `${property} must be an integer` }),
    Min(1),
    Max(doc.maximum),
    ApiPropertyOptional({ type: 'integer', format: 'int32', minimum: 1, ...doc }),
  );
}

/**
 * `limit`, `offset` and `since` of both lists. The validation pipe stops at the first violated
 * constraint of each parameter; decorators apply bottom-up, so each parameter's checks run from
 * the bottom line up: given once, then an integer (or date), then the bounds.
 */
export class ListQueryDto {
  @LimitParameter({
    maximum: MAX_LIMIT,
    default: DEFAULT_LIMIT,
    description: 'Page size: a plain decimal integer, given at most once.',
  })
  limit: number = DEFAULT_LIMIT;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    // Beyond this a number is no longer exact in JSON, where the envelope echoes it.
    maximum: Number.MAX_SAFE_INTEGER,
    default: 0,
    description: 'Items to skip: a plain decimal integer, given at most once.',
  })
  @Max(Number.MAX_SAFE_INTEGER)
  @Min(0)
  @IsInt({ message: 'offset must be an integer' })
  @IsGivenOnce()
  @Transform(toInteger)
  offset: number = 0;

  @DateTimeParameter({
    description:
      'Keeps the items at or after this instant (inclusive): companies whose `lastSeen` >= ' +
      '`since`, leads whose `createdAt` >= `since`. ISO 8601, given at most once; a date alone ' +
      'means its midnight UTC, and a date-time without an offset is read as UTC. Default: no filter.',
    example: '2026-03-01T00:00:00Z',
  })
  since?: Date;
}
