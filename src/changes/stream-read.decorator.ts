import { applyDecorators, Get } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, getSchemaPath } from '@nestjs/swagger';
import { RequiresScopes, type Scope } from '../auth/scopes';
import { ApiContractResponses } from '../http/api-responses.decorator';
import { ChangeStreamCheckpointDto, ChangeStreamEndDto, ItemDeletedDto } from './dto/change.dto';
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
