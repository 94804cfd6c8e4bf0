import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiHeader,
  ApiResponse,
  type ApiResponseCommonMetadata,
  type HeadersObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { Environment, INT32_MAX } from '../config/environment';
import {
  RETRY_AFTER_SATURATED_SECONDS,
  RETRY_AFTER_UNAVAILABLE_SECONDS,
} from '../database/database-errors';
import { CONNECTION_WAIT_MS, STATEMENT_TIMEOUT_MS } from '../database/pool-config';
import { ErrorEnvelopeDto } from './error-envelope.dto';
import {
  IN_FLIGHT_RETRY_AFTER_SECONDS,
  InFlightLimitException,
  StreamLimitException,
} from './refusals';
import { ISO_DATE_TIME_LENGTH } from './iso-date-time';
import { REQUEST_ID_MAX_LENGTH, SANE_REQUEST_ID } from './response-headers';

// The limits as the configuration declares their defaults, so that the text cannot drift from them.
const {
  RATE_LIMIT_PER_MINUTE: PER_MINUTE,
  AUTH_FAILURE_LIMIT_PER_MINUTE: AUTH_FAILURES,
  MAX_IN_FLIGHT_PER_WORKSPACE: IN_FLIGHT,
  CHANGES_RETENTION_DAYS: RETENTION_DAYS,
  QUEUE_DEADLINE_MS,
} = new Environment();
const IN_FLIGHT_REFUSAL = new InFlightLimitException(IN_FLIGHT).message;
const seconds = (ms: number) => `${ms / 1000} second${ms === 1000 ? '' : 's'}`;

// The headers of the contract, as the document states them. `required: true` means that every
// response of that status carries the header: the e2e suite checks exactly that (test/support).
const integer = (minimum: number, maximum: number): SchemaObject => ({
  type: 'integer',
  format: 'int32',
  minimum,
  maximum,
});
// The limits' counts are the configuration's, which it bounds to int32 (config/environment.ts).
const COUNT_MAX = INT32_MAX;
// Seconds to wait are within a one-minute window (or less: the other Retry-After values).
const SECONDS_MAX = 60;
// `0123456789` at most: a count or a number of seconds of a RateLimit member.
const NUMBER_MAX_LENGTH = String(INT32_MAX).length;

const EVERY_RESPONSE: HeadersObject = {
  'X-Request-Id': {
    required: true,
    description:
      "The caller's `X-Request-Id` when it sent a sane one, otherwise a generated id. The same " +
      "id is in the server's log line for the request: quote it when reporting a problem.",
    schema: { type: 'string', maxLength: REQUEST_ID_MAX_LENGTH, pattern: SANE_REQUEST_ID.source },
  },
  'Cache-Control': {
    required: true,
    description: 'The data is private to a workspace: no shared or browser cache may keep it.',
    schema: { type: 'string', enum: ['no-store'] },
  },
  Vary: {
    required: true,
    description:
      'A body of 1 KiB or more is compressed (`Content-Encoding: br` or `gzip`) when the ' +
      "request's Accept-Encoding allows it: every response depends on that header.",
    schema: { type: 'string', enum: ['Accept-Encoding'] },
  },
};

const RATE_LIMIT = (required: boolean): HeadersObject => ({
  'X-RateLimit-Limit': {
    required,
    description: 'Requests allowed per one-minute window.',
    schema: integer(1, COUNT_MAX),
  },
  'X-RateLimit-Remaining': {
    required,
    description: 'Requests left in the current window.',
    schema: integer(0, COUNT_MAX),
  },
  'X-RateLimit-Reset': {
    required,
    description: 'Whole seconds until the current window resets.',
    schema: integer(1, SECONDS_MAX),
  },
});

// draft-ietf-httpapi-ratelimit-headers: each field a Structured Field List, one member per limit.
const POLICIES = ['per-minute', 'auth-failures', 'in-flight'];
const POLICY_NAME = `"(?:${POLICIES.join('|')})"`;
const POLICY_MEMBER = `${POLICY_NAME};q=\\d+;(?:w=\\d+|qu="concurrent-requests")`;
const STATE_MEMBER = `${POLICY_NAME};r=\\d+(?:;t=\\d+)?`;
// Each policy at most once, the longest member being a policy with `qu` and an int32 count.
const MEMBER_MAX_LENGTH =
  `"${POLICIES.reduce((a, b) => (a.length >= b.length ? a : b))}";q=;qu="concurrent-requests"`
    .length + NUMBER_MAX_LENGTH;
const list = (member: string): SchemaObject => ({
  type: 'string',
  maxLength: POLICIES.length * MEMBER_MAX_LENGTH + (POLICIES.length - 1) * ', '.length,
  pattern: `^${member}(?:, ${member})*$`,
});

const IETF_RATE_LIMIT = (required: boolean): HeadersObject => ({
  'RateLimit-Policy': {
    required,
    description:
      `The limits that apply, as the IETF draft writes them: \`"in-flight";q=${IN_FLIGHT};` +
      'qu="concurrent-requests"` (the workspace\'s requests in progress on the instance) and ' +
      `\`"per-minute";q=${PER_MINUTE};w=60\` (the key's budget); ` +
      `\`"auth-failures";q=${AUTH_FAILURES};w=60\` on the 429 of ` +
      'an address past its failed authentications.',
    schema: list(POLICY_MEMBER),
  },
  RateLimit: {
    required,
    description:
      `What is left of each policy: \`"in-flight";r=${IN_FLIGHT - 1}\` (requests that may start ` +
      `now), \`"per-minute";r=${PER_MINUTE - 1};t=42\` (requests left, whole seconds until the ` +
      'window resets).',
    schema: list(STATE_MEMBER),
  },
});

// With every keyed answer whose key expires (or was rolled): when it stops working.
const KEY_EXPIRATION: HeadersObject = {
  'API-Key-Expiration': {
    required: false,
    description:
      'Present when the key expires (created with an expiry, or rolled and within its overlap): ' +
      'the instant from which it is refused with the 401 of an unknown key, ISO 8601 in UTC.',
    schema: { type: 'string', format: 'date-time', maxLength: ISO_DATE_TIME_LENGTH },
  },
};

/** An answer to a request whose key was accepted: its limits (required or not), its expiry. */
const KEYED_ANSWER = (required: boolean): HeadersObject => ({
  ...RATE_LIMIT(required),
  ...IETF_RATE_LIMIT(required),
  ...KEY_EXPIRATION,
  ...EVERY_RESPONSE,
});

// The validator of every 200 of a read (items/conditional-read.guard.ts), and of its 304.
const ETAG: HeadersObject = {
  ETag: {
    required: true,
    description:
      'A weak entity tag of the body: send it back as `If-None-Match` to get a 304 while the ' +
      'body would be the same. It changes whenever the body would.',
    schema: { type: 'string', maxLength: 'W/""'.length + 27, pattern: '^W/"[A-Za-z0-9_-]{27}"$' },
  },
};

const RETRY_AFTER: HeadersObject = {
  'Retry-After': {
    required: true,
    description:
      'Whole seconds to wait: until the next window (same value as X-RateLimit-Reset) when the ' +
      `per-minute limit refused the request, ${IN_FLIGHT_RETRY_AFTER_SECONDS} when the in-flight ` +
      'limit did.',
    schema: integer(1, SECONDS_MAX),
  },
};

const RETRY_AFTER_UNAVAILABLE: HeadersObject = {
  'Retry-After': {
    required: true,
    description:
      `Whole seconds to wait before retrying: ${RETRY_AFTER_SATURATED_SECONDS} when the service ` +
      `sheds load (its backlog would not be served within ${seconds(QUEUE_DEADLINE_MS)}), ` +
      `${RETRY_AFTER_UNAVAILABLE_SECONDS} when the database is unreachable, restarting or too slow.`,
    schema: integer(1, SECONDS_MAX),
  },
};

const WWW_AUTHENTICATE: HeadersObject = {
  'WWW-Authenticate': {
    required: true,
    description: 'The authentication scheme to use.',
    schema: { type: 'string', enum: ['Bearer'] },
  },
};

const WWW_AUTHENTICATE_SCOPE = (scopes: readonly string[]): HeadersObject => ({
  'WWW-Authenticate': {
    required: true,
    description: 'RFC 6750: the scopes the key lacks, space-separated.',
    schema: {
      type: 'string',
      // At most every scope the operation needs.
      maxLength: `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`.length,
      pattern: '^Bearer error="insufficient_scope", scope="[a-z: ]+"$',
    },
  },
});

const errorExample = (
  statusCode: number,
  error: string,
  message: string | string[],
  path = '/v1/companies?limit=500',
) => ({
  statusCode,
  message,
  error,
  path,
  timestamp: '2026-03-01T09:30:00.000Z',
});

/** A 200 of newline-delimited JSON: `line` is the schema of each line. */
export interface NdjsonOk {
  ndjson: SchemaObject;
}

/** A 200 of JSON described by a schema rather than a class: the models it refers to included. */
export interface JsonOk {
  json: SchemaObject;
  models: Type<unknown>[];
}

/** Statuses only some operations answer. */
export interface ExtraResponses {
  /** The single-item reads: an id that is not an item of the key's workspace. */
  notFound?: string;
  /** The change feeds: a cursor older than the retention of deletions. */
  gone?: boolean;
  /** What a key must be allowed to read here: a restricted key without it gets 403 (documented). */
  scopes?: readonly string[];
  /** What it must also be allowed to read when it gives these parameters (`visitedPage`). */
  parameterScopes?: Readonly<Record<string, readonly string[]>>;
  /** The change streams: their own limits (a 429 and a 503 more). */
  streamLimits?: { perWorkspace: number; retryAfterSeconds: number };
}

/** What an operation's responses depend on. */
interface Operation extends ExtraResponses {
  ok: Type<unknown> | NdjsonOk | JsonOk;
  okDescription: string;
}

type Response = Omit<ApiResponseCommonMetadata, 'status'>;

// A request header that takes any value: what HTTP allows in one (RFC 9110's field-value, which
// Node's parser holds to, obs-text read as Latin-1), within Node's 16 KiB limit on a request's
// headers (a longer one is a 431, src/http/client-error.ts).
const ANY_HEADER_VALUE: SchemaObject = {
  type: 'string',
  maxLength: 16 * 1024,
  pattern: '^[\\t\\x20-\\x7E\\x80-\\xFF]*$',
};

/**
 * The responses of the contract, by status: each what an operation answers with that status, or
 * undefined when it never does. All of them follow the authentication and rate-limit rules.
 */
const RESPONSES: Record<number, (operation: Operation) => Response | undefined> = {
  200: ({ ok, okDescription }) =>
    'ndjson' in ok
      ? {
          description: okDescription,
          content: { 'application/x-ndjson': { schema: ok.ndjson } },
          headers: KEYED_ANSWER(true),
        }
      : {
          description: okDescription,
          ...('json' in ok ? { schema: ok.json } : { type: ok }),
          headers: { ...ETAG, ...KEYED_ANSWER(true) },
        },
  304: ({ ok }) =>
    'ndjson' in ok
      ? undefined
      : {
          description:
            '`If-None-Match` names the current `ETag`: the body would be the same, and is not ' +
            'sent. Not counted against the per-minute limit (its hit is given back: the ' +
            'rate-limit headers say so).',
          headers: { ...ETAG, ...KEYED_ANSWER(true) },
        },
  400: ({ ok }) => ({
    description:
      'A query parameter is invalid: out of bounds, not a plain decimal integer, not an ISO ' +
      '8601 date-time, given twice, or unknown, or a `cursor` that this feed did not issue for ' +
      'this workspace (`cursor is not valid`). `message` has one entry per violated ' +
      'constraint. The request counts against the rate limit.' +
      ('ndjson' in ok
        ? ' Also an `Accept` that does not allow `application/x-ndjson` ' +
          '(`Accept must allow application/x-ndjson`). Answered before any line is sent.'
        : ''),
    type: ErrorEnvelopeDto,
    headers: KEYED_ANSWER(true),
    example: errorExample(400, 'BAD_REQUEST', ['limit must not be greater than 200']),
  }),
  401: () => ({
    description:
      'The key is absent, malformed, unknown or revoked, its workspace is on a plan without API ' +
      'access (`starter`) or suspended: the same response for all, so that the reason cannot ' +
      'be told. The key is checked before the parameters.',
    type: ErrorEnvelopeDto,
    headers: { ...WWW_AUTHENTICATE, ...EVERY_RESPONSE },
    example: errorExample(401, 'UNAUTHORIZED', 'Unauthorized'),
  }),
  403: ({ scopes, parameterScopes = {} }) => {
    if (scopes === undefined) return undefined;
    const byParameter = Object.entries(parameterScopes).map(
      ([name, needed]) =>
        `, nor, with \`${name}\`, ${needed.map((scope) => `\`${scope}\``).join(' and ')}`,
    );
    // The header names every scope the key lacks: a parameter's too, when it is given.
    const every = [...new Set([...scopes, ...Object.values(parameterScopes).flat()])];
    return {
      description:
        'The key is valid but restricted to scopes that do not include ' +
        `${scopes.map((scope) => `\`${scope}\``).join(' and ')}${byParameter.join('')}: the ` +
        'message names what it lacks, and `WWW-Authenticate` says `insufficient_scope` (RFC ' +
        '6750). It costs nothing of the rate limits.',
      type: ErrorEnvelopeDto,
      headers: { ...WWW_AUTHENTICATE_SCOPE(every), ...KEY_EXPIRATION, ...EVERY_RESPONSE },
      example: errorExample(403, 'FORBIDDEN', `This key lacks the scope ${scopes[0]}`),
    };
  },
  404: ({ notFound }) =>
    notFound === undefined
      ? undefined
      : {
          description: notFound,
          type: ErrorEnvelopeDto,
          headers: KEYED_ANSWER(true),
          example: errorExample(404, 'NOT_FOUND', 'Not Found', '/v1/companies/co_000001'),
        },
  410: ({ gone }) =>
    gone
      ? {
          description:
            'The cursor points before deletions that were pruned after the retention ' +
            `(\`CHANGES_RETENTION_DAYS\`, ${RETENTION_DAYS} days by default): the client may ` +
            'have missed some. Start again without a cursor, replacing the local copy.',
          type: ErrorEnvelopeDto,
          headers: KEYED_ANSWER(true),
          example: errorExample(
            410,
            'GONE',
            'cursor has expired: start again without a cursor',
            '/v1/companies/changes?cursor=...',
          ),
        }
      : undefined,
  429: ({ streamLimits }) => ({
    description:
      `A limit is reached. The per-minute limit: ${PER_MINUTE} requests per one-minute window ` +
      `per key, or, for requests that fail authentication, ${AUTH_FAILURES} per minute per ` +
      'client address (message `Too Many Requests`, with the X-RateLimit headers, ' +
      'X-RateLimit-Remaining 0). The in-flight limit: the workspace (all its keys) already has ' +
      `${IN_FLIGHT} requests in progress on the instance (message \`${IN_FLIGHT_REFUSAL}\`, ` +
      `\`Retry-After: ${IN_FLIGHT_RETRY_AFTER_SECONDS}\`, without the X-RateLimit headers: it ` +
      'costs nothing of the per-minute budget). RateLimit shows the policy at 0 ' +
      '(`"per-minute";r=0;t=42`, `"in-flight";r=0`, `"auth-failures";r=0;t=42`). Wait ' +
      '`Retry-After` seconds.' +
      (streamLimits
        ? ' The stream limit: the workspace already has ' +
          `${streamLimits.perWorkspace} change streams running on the instance (message ` +
          `\`${new StreamLimitException(streamLimits.perWorkspace).message}\`, \`Retry-After: ` +
          `${streamLimits.retryAfterSeconds}\`).`
        : ''),
    type: ErrorEnvelopeDto,
    headers: {
      ...RETRY_AFTER,
      ...RATE_LIMIT(false),
      ...IETF_RATE_LIMIT(true),
      ...KEY_EXPIRATION,
      ...EVERY_RESPONSE,
    },
    example: errorExample(429, 'TOO_MANY_REQUESTS', 'Too Many Requests'),
  }),
  500: () => ({
    description:
      'An unexpected failure; the body carries no detail of it. The X-RateLimit headers are ' +
      'present when the key had been accepted.',
    type: ErrorEnvelopeDto,
    headers: KEYED_ANSWER(false),
    example: errorExample(500, 'INTERNAL_SERVER_ERROR', 'Internal server error'),
  }),
  503: ({ streamLimits }) => ({
    description:
      'The service sheds load or the database is unavailable: the backlog of requests waiting ' +
      `for the database would not be served within ${seconds(QUEUE_DEADLINE_MS)} (refused at ` +
      'once, the workspaces with the most requests in progress first), no database connection ' +
      `within ${seconds(CONNECTION_WAIT_MS)}, the database unreachable, or a statement past ` +
      `${seconds(STATEMENT_TIMEOUT_MS)}. Retry after \`Retry-After\` seconds, with backoff: the ` +
      'service recovers by itself. The X-RateLimit headers are present when the key had been ' +
      'accepted.' +
      (streamLimits
        ? ' Also when the instance already runs its most change streams (`Retry-After: ' +
          `${streamLimits.retryAfterSeconds}\`).`
        : ''),
    type: ErrorEnvelopeDto,
    headers: { ...RETRY_AFTER_UNAVAILABLE, ...KEYED_ANSWER(false) },
    example: errorExample(503, 'SERVICE_UNAVAILABLE', 'Service temporarily unavailable'),
  }),
};

/**
 * The responses an operation of v1 documents (RESPONSES), and the request headers it reads: the
 * 200 with its schema, and each error with the envelope.
 */
export function ApiContractResponses(
  ok: Type<unknown> | NdjsonOk | JsonOk,
  okDescription: string,
  extra: ExtraResponses = {},
): MethodDecorator {
  const operation: Operation = { ...extra, ok, okDescription };
  const responses = Object.entries(RESPONSES).flatMap(([status, response]) => {
    const answered = response(operation);
    return answered ? [ApiResponse({ status: Number(status), ...answered })] : [];
  });
  return applyDecorators(
    ...responses,
    ApiHeader({
      name: 'X-Request-Id',
      required: false,
      // In words, not as the regex: SwaggerModule puts the document into Swagger UI's script
      // with String.replace, where `$` followed by a backquote is a replacement pattern.
      description:
        'An id of your own for this request, 1 to 128 letters, digits, `.`, `_`, `:` or `-`: ' +
        'echoed in the response and logged. Any other value is replaced by a generated id, not ' +
        'refused.',
      schema: ANY_HEADER_VALUE,
    }),
    ...('ndjson' in ok
      ? []
      : [
          ApiHeader({
            name: 'If-None-Match',
            required: false,
            description:
              'The `ETag` of an earlier 200 of the same request (or several, comma-separated, or ' +
              '`*`): a 304 without body while the body would still be the same. A 304 is not ' +
              'counted against the per-minute limit.',
            schema: ANY_HEADER_VALUE,
          }),
        ]),
    ...('json' in ok ? [ApiExtraModels(...ok.models)] : []),
  );
}
