import type { NextFunction, Request, Response } from 'express';
import { takePreconditions } from './conditional-requests';
import { tooManyHeaders } from './header-count';
import { readPath } from './literal-path';
import { setCommonHeaders } from './response-headers';
import { setSecurityHeaders } from './security-headers';

/**
 * What every request goes through before routing (app.setup.ts), one step after the other in one
 * middleware: the headers of every answer, so that a refusal before routing has them too; the 431
 * of too many header lines; the preconditions taken out of the request; its path read, or
 * refused. One middleware rather than a middleware a step: Express's router runs each as a layer
 * of its own, matched and called through `next` (docs/benchmarks.md, "The fixed cost of a
 * request").
 */
export function prepareRequest(request: Request, response: Response, next: NextFunction): void {
  setSecurityHeaders(request.path, response);
  setCommonHeaders(request, response);
  const refusal = tooManyHeaders(request);
  if (refusal) return next(refusal);
  takePreconditions(request);
  next(readPath(request));
}
