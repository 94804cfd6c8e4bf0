import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { perRoute } from '../common/per-route';
import { Database } from '../database/database';
import { DATA_VERSION_STATEMENT } from './item-sql';
import { RateLimitRefund } from '../rate-limit/rate-limit-refund';
import {
  type ConditionalRead,
  matchesAny,
  NotModifiedException,
  weakEtag,
} from '../http/conditional-requests';
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
 *
 * A guard, run after the key's and the rate limit's, rather than an interceptor: the version is
 * read before the handler runs, and the answer's ETag made where NestJS sends the handler's result
 * (the HTTP adapter, http/api-express-adapter.ts, calls `answer`). An interceptor puts each request
 * through NestJS's RxJS chain (a ReplaySubject, `defer` and `mergeAll` twice, two bound functions,
 * the result through `lastValueFrom` twice); docs/benchmarks.md, "What keeps a request alive". The
 * request is marked with the guard itself, not with a function made for it: such
 * a function, holding the request, makes each young collection promote 950 KB (49 KB without)
 * under a load of `/v1/me` (test/built/young-generation.e2e-spec.ts).
 */
@Injectable()
export class ConditionalReadGuard implements CanActivate, ConditionalRead {
  private readonly isVersioned = perRoute(
    (handler) => this.reflector.get<boolean | undefined>(VERSIONED_READ, handler) === true,
  );

  constructor(
    private readonly reflector: Reflector,
    private readonly database: Database,
    private readonly refunds: RateLimitRefund,
  ) {}

  /** Marks the request as a conditional read; a 304 (thrown) when its data version still matches. */
  canActivate(context: ExecutionContext): true | Promise<true> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    request.conditionalRead = this;
    // `*` matches only an answer that exists (RFC 9110, 13.1.2): an item may be a 404, which
    // only its statement can tell; it is evaluated on the answer.
    const tags = request.ifNoneMatch?.filter((tag) => tag !== '*');
    if (!this.isVersioned(context) || !tags || tags.length === 0) return true;
    return this.versionMatches(request, http.getResponse<Response>(), tags);
  }

  /** The body to send, its ETag set; or the 304, thrown. */
  async answer(request: Request, response: Response, result: unknown): Promise<string> {
    const read = isVersionedJson(result) ? result : undefined;
    const body = read?.json ?? (typeof result === 'string' ? result : JSON.stringify(result));
    const etag = this.etagOf(request, read ? `version:${read.version}` : `body:${body}`);
    response.setHeader('ETag', etag);
    if (matchesAny(request.ifNoneMatch, etag)) await this.notModified(request, response, etag);
    return body;
  }

  private async versionMatches(request: Request, response: Response, tags: string[]) {
    const workspaceId = request.auth?.workspace.id ?? '';
    const [{ version }] = await this.database
      .forWorkspace(workspaceId)
      .query<{ version: string }>(DATA_VERSION_STATEMENT, [workspaceId]);
    const etag = this.etagOf(request, `version:${version}`);
    if (matchesAny(tags, etag)) await this.notModified(request, response, etag);
    return true as const;
  }

  private etagOf(request: Request, source: string): string {
    return weakEtag(request.auth?.workspace.id ?? '', request.originalUrl, source);
  }

  /** The 304 (thrown) with its ETag, the request's hit of the budget given back. */
  private async notModified(request: Request, response: Response, etag: string): Promise<never> {
    response.setHeader('ETag', etag);
    await this.refunds.refund(request, response);
    throw new NotModifiedException();
  }
}
