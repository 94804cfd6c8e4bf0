import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { perRoute } from '../common/per-route';
import { Database } from '../database/database';
import { DATA_VERSION_STATEMENT } from './item-sql';
import { RateLimitRefund } from '../rate-limit/rate-limit-refund';
import { matchesAny, NotModifiedException, weakEtag } from '../http/conditional-requests';
import { isVersionedJson } from '../http/json-text';

/** Marks a read whose body is a VersionedJson: its ETag is known before its statement runs. */
export const VERSIONED_READ = 'versionedRead';
export const VersionedRead = () => SetMetadata(VERSIONED_READ, true);

/**
 * ETags and `If-None-Match` for the reads of /v1 (docs/api.md, "Conditional requests").
 *
 * - Lists and single reads (VersionedRead): the ETag is made from the workspace, the request's
 *   path and query, and the version of the workspace's data read in the same statement as the
 *   body (items/item-sql.ts). A request with `If-None-Match` first reads the version alone, one
 *   small statement: when the tag still matches, the answer is a 304 and the page's statement
 *   never runs.
 * - The change feeds and /v1/me: the ETag is made from the body, so a 304 saves the transfer, not
 *   the statement. A feed page's body can change with no write to the workspace (its cursor
 *   follows the database's transaction horizon), which a data version would miss.
 *
 * A 304 carries the ETag, the request id and the rate-limit headers, no body, and gives its hit
 * of the per-minute budget back (rate-limit-refund.ts).
 */
@Injectable()
export class ConditionalReadInterceptor implements NestInterceptor {
  private readonly isVersioned = perRoute(
    (handler) => this.reflector.get<boolean | undefined>(VERSIONED_READ, handler) === true,
  );

  constructor(
    private readonly reflector: Reflector,
    private readonly database: Database,
    private readonly refunds: RateLimitRefund,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    return from(this.answer(request, response, this.isVersioned(context), next));
  }

  /** The body to send, its ETag set; or the 304, thrown. */
  private async answer(
    request: Request,
    response: Response,
    versioned: boolean,
    next: CallHandler,
  ): Promise<unknown> {
    const workspaceId = request.auth?.workspace.id ?? '';
    const etagOf = (source: string) => weakEtag(workspaceId, request.originalUrl, source);
    // `*` matches only an answer that exists (RFC 9110, 13.1.2): an item may be a 404, which
    // only its statement can tell; it is evaluated on the answer, below.
    const tags = request.ifNoneMatch?.filter((tag) => tag !== '*');
    if (versioned && tags && tags.length > 0) {
      const [{ version }] = await this.database
        .forWorkspace(workspaceId)
        .query<{ version: string }>(DATA_VERSION_STATEMENT, [workspaceId]);
      const etag = etagOf(`version:${version}`);
      if (matchesAny(tags, etag)) await this.notModified(request, response, etag);
    }
    const result: unknown = await lastValueFrom(next.handle());
    const read = isVersionedJson(result) ? result : undefined;
    const body = read?.json ?? (typeof result === 'string' ? result : JSON.stringify(result));
    const etag = etagOf(read ? `version:${read.version}` : `body:${body}`);
    response.setHeader('ETag', etag);
    if (matchesAny(request.ifNoneMatch, etag)) await this.notModified(request, response, etag);
    return body;
  }

  /** The 304 (thrown) with its ETag, the request's hit of the budget given back. */
  private async notModified(request: Request, response: Response, etag: string): Promise<never> {
    response.setHeader('ETag', etag);
    await this.refunds.refund(request, response);
    throw new NotModifiedException();
  }
}
