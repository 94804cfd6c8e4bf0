import { BadRequestException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

// The single-item routes, whose last segment is an id.
const ITEM_PATH = /^\/v1\/(companies|leads)\/[^/]+$/;

/**
 * An item id that is not valid percent-encoding (`/v1/companies/%E0%A4%A`) is read literally, each
 * `%` as itself, instead of failing in Express's router: that failure is a 400 answered before the
 * guards, so without a key it would not be the contract's 401, and with one it would lack the
 * rate-limit headers. Read literally, such an id is no item of any workspace: a 404 after the key.
 * Other malformed paths name no route: refuseUndecodablePaths answers them 400. The error
 * envelope's `path` still shows the request as it was received (`originalUrl`).
 */
export function readMalformedIdsLiterally(request: Request, _: Response, next: NextFunction) {
  const [path, query] = splitAtQuery(request.url);
  if (ITEM_PATH.test(path) && !decodes(path)) {
    request.url = path.replaceAll('%', '%25') + query;
  }
  next();
}

/**
 * A path that is not valid percent-encoding (`/v1/%ZZ`), once item ids are read literally: a
 * malformed request, 400 before routing, whatever route it resembles (RFC 3986, 2.1).
 */
export function refuseUndecodablePaths(request: Request, _: Response, next: NextFunction) {
  next(decodes(splitAtQuery(request.url)[0]) ? undefined : new BadRequestException());
}

/** Whether a path is valid percent-encoding (Express's router fails on one that is not). */
export function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function splitAtQuery(url: string): [string, string] {
  const at = url.indexOf('?');
  return at === -1 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}
