import { BadRequestException } from '@nestjs/common';
import type { Request } from 'express';

// The single-item routes, whose last segment is an id.
const ITEM_PATH = /^\/v1\/(companies|leads)\/[^/]+$/;

/**
 * A path that is not valid percent-encoding, before routing (Express's router fails on one):
 * - an item id (`/v1/companies/%E0%A4%A`) is read literally, each `%` as itself: that failure
 *   would be a 400 answered before the guards, so without a key it would not be the contract's
 *   401, and with one it would lack the rate-limit headers. Read literally, such an id is no item
 *   of any workspace: a 404 after the key.
 * - any other (`/v1/%ZZ`) names no route: a malformed request, 400, whatever route it resembles
 *   (RFC 3986, 2.1), returned for the caller to refuse.
 * The error envelope's `path` still shows the request as it was received (`originalUrl`).
 */
export function readPath(request: Request): BadRequestException | undefined {
  const query = request.url.indexOf('?');
  const path = query === -1 ? request.url : request.url.slice(0, query);
  if (decodes(path)) return undefined;
  if (!ITEM_PATH.test(path)) return new BadRequestException();
  request.url = path.replaceAll('%', '%25') + (query === -1 ? '' : request.url.slice(query));
  return undefined;
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
