import { ApiProperty } from '@nestjs/swagger';
import { ISO_DATE_TIME_LENGTH } from './iso-date-time';

/** The error body of the contract, for every status (written by AllExceptionsFilter only). */
export class ErrorEnvelopeDto {
  @ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 400,
    maximum: 599,
    description: 'The HTTP status code, repeated in the body.',
    example: 400,
  })
  statusCode!: number;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    description:
      'For parameter validation (400), an array with one entry per violated constraint, each ' +
      'naming the parameter (`"limit must not be greater than 200"`, `"property foo should not ' +
      'exist"`). For every other status, a fixed text that never echoes the request or internals: ' +
      '`Unauthorized`, `Not Found`, `Too Many Requests`, `Service temporarily unavailable`, ' +
      '`Internal server error`.',
    example: ['limit must not be greater than 200'],
  })
  message!: string | string[];

  @ApiProperty({
    // The names of HTTP's statuses (node:http's STATUS_CODES), the longest 31 characters.
    maxLength: 40,
    pattern: '^[A-Z][A-Z_]*$',
    description:
      'The symbolic name of the HTTP status, in upper case: `BAD_REQUEST`, `UNAUTHORIZED`, ' +
      '`NOT_FOUND`, `TOO_MANY_REQUESTS`, `INTERNAL_SERVER_ERROR`, `SERVICE_UNAVAILABLE`.',
    example: 'BAD_REQUEST',
  })
  error!: string;

  @ApiProperty({
    description:
      'The path called with its query string, as received (still percent-encoded), with every ' +
      'key-shaped value (`st_...`, in any encoding, glued to other text or not) replaced by ' +
      '`st_[REDACTED]`: a key sent in the URL is not repeated back. Empty for a request the HTTP ' +
      'parser could not read.',
    example: '/v1/companies?limit=500',
  })
  path!: string;

  @ApiProperty({
    format: 'date-time',
    maxLength: ISO_DATE_TIME_LENGTH,
    description: 'When the error occurred: ISO 8601 in UTC with milliseconds.',
    example: '2026-03-01T09:30:00.000Z',
  })
  timestamp!: string;
}
