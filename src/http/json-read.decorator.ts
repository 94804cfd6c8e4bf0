import { applyDecorators, Get, Header, type Type } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { ApiContractResponses, type ExtraResponses } from './api-responses.decorator';

/** What the OpenAPI document says of one read (its operation) and what it answers. */
export interface ReadOperation extends ExtraResponses {
  operationId: string;
  summary: string;
  description: string;
  /** The 200's body, and what it is. */
  ok: Type<unknown>;
  okDescription: string;
}

/**
 * A `GET` of the public API whose body PostgreSQL wrote (a JsonText, see list-page-sql.ts): the
 * route, its JSON type, its operation and every documented response, with the scopes it needs.
 */
export function JsonRead(path: string | undefined, operation: ReadOperation): MethodDecorator {
  const { operationId, summary, description, ok, okDescription, ...extra } = operation;
  return applyDecorators(
    Get(path),
    Header('Content-Type', 'application/json; charset=utf-8'),
    ApiOperation({ operationId, summary, description }),
    ApiContractResponses(ok, okDescription, extra),
  );
}
