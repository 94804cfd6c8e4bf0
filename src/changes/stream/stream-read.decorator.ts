import { applyDecorators, Get } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, getSchemaPath } from '@nestjs/swagger';
import { RequiresScopes, type Scope } from '../../auth/scopes';
import { Environment } from '../../config/environment';
import { ApiContractResponses } from '../../http/api-responses.decorator';
import { MAX_CHANGES_LIMIT } from '../changes-query.dto';
import { ChangeStreamCheckpointDto, ChangeStreamEndDto, ItemDeletedDto } from '../dto/change.dto';
import { STREAM_RETRY_AFTER_SECONDS } from './change-streams';

/** What the OpenAPI document says of a change stream (its operation) and what it answers. */
export interface StreamOperation {
  scopes: Scope[];
  operationId: string;
  summary: string;
  description: string;
  /** The feed's upsert, one of the lines' shapes. */
  upserted: new () => unknown;
  okDescription: string;
  /** MAX_CHANGE_STREAMS_PER_WORKSPACE's default, for the 429's description. */
  perWorkspace: number;
}

// The limits as the configuration declares their defaults, so that the text cannot drift from them.
const { CHANGE_STREAM_MAX_SECONDS, MAX_CHANGE_STREAMS_PER_WORKSPACE } = new Environment();
const minutes = CHANGE_STREAM_MAX_SECONDS / 60;
const MAX_TIME = `${minutes} minute${minutes === 1 ? '' : 's'}`;
const PAGE = MAX_CHANGES_LIMIT.toLocaleString('en-US');

/** A feed's change stream as the OpenAPI document states it: the same words for every feed. */
export function streamOperation({
  item,
  operationId,
  upserted,
  scopes,
}: {
  /** The feed's item, as the summary names it: `company`, `lead`. */
  item: string;
  operationId: string;
  upserted: new () => unknown;
  scopes: Scope[];
}): StreamOperation {
  return {
    operationId,
    summary: `The whole ${item} change feed in one request, as it is read`,
    description:
      'The whole change feed in one response, as newline-delimited JSON: every change the pages ' +
      "would return, in the same order, one per line (exactly the objects of the pages' `data`), " +
      `a checkpoint line \`{"cursor": ...}\` after each batch (at most ${PAGE} changes apart), ` +
      'and a last line `{"cursor": ..., "hasMore": ...}` once it ends normally: caught up ' +
      `(\`false\`), or at its time bound (${MAX_TIME} by default) or the instance shutting down ` +
      '(`true`: continue at once with its cursor). A stream without that last line was cut: ' +
      'resume from the last checkpoint whose changes you applied. Without `cursor` it starts at ' +
      "the beginning, every live item as an upsert; with one (a page's `nextCursor` or a " +
      "stream's), after it. One request against the rate limit and one of the in-flight places " +
      `while it runs; at most ${MAX_CHANGE_STREAMS_PER_WORKSPACE} streams of a workspace at once ` +
      'per instance. Compressed (br, gzip) as `Accept-Encoding` allows, flushed as it goes.',
    upserted,
    okDescription:
      'Newline-delimited JSON (`application/x-ndjson`): each line one change, a checkpoint or ' +
      'the last line.',
    scopes,
    perWorkspace: MAX_CHANGE_STREAMS_PER_WORKSPACE,
  };
}

/**
 * A `GET` that answers a change feed as newline-delimited JSON (change-streams.ts): the route,
 * the scopes it needs, its operation, the shapes of its lines and every documented response. Its
 * handler writes the response itself (`@Res()`).
 */
export function StreamRead(path: string, operation: StreamOperation): MethodDecorator {
  const { scopes, operationId, summary, description, upserted, okDescription, perWorkspace } =
    operation;
  const lines = [upserted, ItemDeletedDto, ChangeStreamCheckpointDto, ChangeStreamEndDto];
  return applyDecorators(
    RequiresScopes(...scopes),
    Get(path),
    ApiOperation({ operationId, summary, description }),
    ApiExtraModels(...lines),
    ApiContractResponses(
      // anyOf: a last line is also a checkpoint (it has the cursor to continue from).
      { ndjson: { anyOf: lines.map((line) => ({ $ref: getSchemaPath(line) })) } },
      okDescription,
      {
        gone: true,
        scopes,
        streamLimits: { perWorkspace, retryAfterSeconds: STREAM_RETRY_AFTER_SECONDS },
      },
    ),
  );
}
