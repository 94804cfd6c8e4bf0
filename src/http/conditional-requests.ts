import { HttpException, HttpStatus } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { hash } from 'node:crypto';

declare module 'express-serve-static-core' {
  interface Request {
    /**
     * The entity tags of a GET's or HEAD's `If-None-Match` (`*` as is), weak or not; undefined:
     * none.
     */
    ifNoneMatch?: string[];
    /** Set on the reads of /v1 by their guard: answers them with their ETag. */
    conditionalRead?: ConditionalRead;
  }
}

/**
 * A read of /v1 with its ETag (items/conditional-read.guard.ts): the handler's result made the
 * body to send, its ETag set, or the 304, thrown. Called by the HTTP adapter
 * (api-express-adapter.ts).
 */
export interface ConditionalRead {
  answer(request: Request, response: Response, result: unknown): Promise<string>;
}

// The preconditions of RFC 9110, 13.1 that a GET may carry. Only If-None-Match is evaluated, by
// the API itself (items/conditional-read.guard.ts); the others name validators the API does not
// send (Last-Modified) or ask for a write's semantics, and are ignored.
const CONDITIONAL_HEADERS = [
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'if-range',
];

/**
 * Takes the preconditions out of every request before anything else reads them: Express's own
 * freshness check would otherwise answer a bare 304 wherever a matching ETag header is set, and
 * did answer `If-None-Match: *` with a 304 on every GET (the health probe included). A GET's
 * `If-None-Match` is kept on the request, for the reads of /v1 that evaluate it, and so is a
 * HEAD's: HEAD is the GET without its body, preconditions included (RFC 9110, 9.3.2).
 */
export function takePreconditions(request: Request): void {
  const ifNoneMatch = request.headers['if-none-match'];
  if (isRead(request) && typeof ifNoneMatch === 'string') {
    request.ifNoneMatch = ifNoneMatch
      .split(',')
      .map((tag) => tag.trim())
      .filter((tag) => tag !== '');
  }
  for (const name of CONDITIONAL_HEADERS) delete request.headers[name];
}

function isRead(request: Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD';
}

/**
 * A weak entity tag (RFC 9110, 8.8.1): equal for two answers whose bodies are the same JSON,
 * whatever their compression. Made from what the body depends on: `parts` (the workspace, the
 * request's path and query, and the data's version or the body itself), hashed so that nothing of
 * them can be read back from it.
 */
export function weakEtag(...parts: string[]): string {
  return `W/"${hash('sha256', parts.join('\n'), 'base64url').slice(0, 27)}"`;
}

/** Whether `If-None-Match` names this tag, by the weak comparison of RFC 9110 (or is `*`). */
export function matchesAny(wanted: readonly string[] | undefined, etag: string): boolean {
  if (!wanted) return false;
  const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);
  return wanted.some((tag) => tag === '*' || opaque(tag) === opaque(etag));
}

/** Thrown to answer 304 Not Modified: no body (AllExceptionsFilter writes it). */
export class NotModifiedException extends HttpException {
  constructor() {
    super('', HttpStatus.NOT_MODIFIED);
  }
}

/**
 * `GET /v1/openapi.json` evaluates If-None-Match too: its ETag is the document's (fixed for a
 * build), and a matching request gets a 304. Before SwaggerModule's route, which sends the body.
 */
export function conditionalDocument(document: unknown) {
  const etag = weakEtag('openapi', JSON.stringify(document));
  return (request: Request, response: Response, next: NextFunction): void => {
    if (!isRead(request)) return next();
    response.setHeader('ETag', etag);
    if (!matchesAny(request.ifNoneMatch, etag)) return next();
    response.status(HttpStatus.NOT_MODIFIED).end();
  };
}
