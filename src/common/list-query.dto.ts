import { Transform } from 'class-transformer';
import { IsDate, IsInt, IsOptional, Max, Min, ValidateBy } from 'class-validator';
import { parseIsoDateTime } from './iso-date-time';

// Query values arrive as strings, or as arrays when a parameter is repeated. Only plain decimal
// integers become numbers: Number() would accept '', '1e2', '0x10' and ' 7 '.
const DECIMAL_INTEGER = /^\d+$/;

function toInteger({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && DECIMAL_INTEGER.test(value) ? Number(value) : value;
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
function IsGivenOnce(): PropertyDecorator {
  return ValidateBy({
    name: 'isGivenOnce',
    validator: {
      validate: (value: unknown) => !Array.isArray(value),
      defaultMessage: (args) => `${args?.property} must be given only once`,
    },
  });
}

/**
 * `limit`, `offset` and `since` of both lists. The validation pipe stops at the first violated
 * constraint of each parameter; decorators apply bottom-up, so each parameter's checks run from
 * the bottom line up: given once, then an integer (or date), then the bounds.
 */
export class ListQueryDto {
  @Max(200)
  @Min(1)
  @IsInt({ message: 'limit must be an integer' })
  @IsGivenOnce()
  @Transform(toInteger)
  limit: number = 50;

  // Beyond this a number is no longer exact in JSON, where the envelope echoes it.
  @Max(Number.MAX_SAFE_INTEGER)
  @Min(0)
  @IsInt({ message: 'offset must be an integer' })
  @IsGivenOnce()
  @Transform(toInteger)
  offset: number = 0;

  @IsDate({ message: 'since must be an ISO 8601 date-time' })
  @IsGivenOnce()
  @IsOptional()
  @Transform(toDate)
  since?: Date;
}
