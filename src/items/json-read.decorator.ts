import { applyDecorators, Controller, Get, Header, type Type, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  type ParameterScopes,
  RequiresScopes,
  RequiresScopesFor,
  type Scope,
} from '../auth/scopes';
import {
  ApiContractResponses,
  type ExtraResponses,
  type JsonOk,
} from '../http/api-responses.decorator';
import { ConditionalReadGuard, VersionedRead } from './conditional-read.guard';
import { ID_MAX_LENGTH } from './fields';

/** What the OpenAPI document says of one read (its operation) and what it answers. */
export interface ReadOperation extends ExtraResponses {
  /** What a key must be allowed to read here (ScopeGuard): a restricted key without it gets 403. */
  scopes?: Scope[];
  /** What a key must also be allowed to read when it gives these parameters. */
  parameterScopes?: ParameterScopes;
  operationId: string;
  summary: string;
  description: string;
  /** The 200's body (a class, or a schema over classes), and what it is. */
  ok: Type<unknown> | JsonOk;
  okDescription: string;
  /** The body comes with the version of the workspace's data: a cheap 304 (conditional-read.guard.ts). */
  versioned?: boolean;
}

/**
 * A `GET` of the public API whose body PostgreSQL wrote (a JsonText, see list-page-sql.ts): the
 * route, its JSON type, its ETag and `If-None-Match` (conditional-read.guard.ts), its
 * operation and every documented response, with the scopes it needs.
 */
export function JsonRead(path: string | undefined, operation: ReadOperation): MethodDecorator {
  const {
    operationId,
    summary,
    description,
    ok,
    okDescription,
    versioned,
    parameterScopes,
    ...extra
  } = operation;
  return applyDecorators(
    ...(extra.scopes ? [RequiresScopes(...extra.scopes)] : []),
    ...(parameterScopes ? [RequiresScopesFor(parameterScopes)] : []),
    Get(path),
    Header('Content-Type', 'application/json; charset=utf-8'),
    UseGuards(ConditionalReadGuard),
    ...(versioned ? [VersionedRead()] : []),
    ApiOperation({ operationId, summary, description }),
    ...(path?.split('/').includes(':id') ? [ApiItemId()] : []),
    ApiContractResponses(ok, okDescription, { ...extra, parameterScopes }),
  );
}

/** The `{id}` of a single-item read: every id is bounded (items/fields.ts). */
function ApiItemId(): MethodDecorator {
  return ApiParam({
    name: 'id',
    description:
      `The item's id: 1 to ${ID_MAX_LENGTH} characters, as one percent-encoded path segment. ` +
      'Any other is the 404 of an id that no item has.',
    schema: { type: 'string', minLength: 1, maxLength: ID_MAX_LENGTH },
  });
}

/** A controller of the public API's reads: its path, its tag in the OpenAPI document, the key. */
export function ReadController(path: string, tag: string): ClassDecorator {
  return applyDecorators(ApiTags(tag), ApiBearerAuth(), Controller(path));
}
