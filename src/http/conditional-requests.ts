import type { NextFunction, Request, Response } from 'express';

// The preconditions of RFC 9110, 13.1 that a GET may carry.
const CONDITIONAL_HEADERS = [
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
];

/**
 * The API sends no validator (no `ETag`, no `Last-Modified`: every answer is `no-store`), so it
 * evaluates no precondition: every GET is answered in full. Without this, Express answered
 * `If-None-Match: *` with a bare 304 on every GET, the health probe and the OpenAPI document
 * included (its freshness check treats `*` as a match), against what docs/api.md says.
 */
export function ignorePreconditions(request: Request, _: Response, next: NextFunction): void {
  for (const name of CONDITIONAL_HEADERS) delete request.headers[name];
  next();
}
