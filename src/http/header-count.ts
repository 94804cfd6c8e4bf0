import { HttpException } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/**
 * The most header lines a request may have: Apache httpd's LimitRequestFields default. Node's
 * parser keeps only the first 2,000 and drops the rest without a word (maxHeadersCount): without
 * this bound a key sent after the 2,000th header would be a 401, and empty lines would pass the
 * 16 KiB bound on the header bytes (16,000 of them, 64 KB, are read).
 */
export const MAX_REQUEST_HEADERS = 100;

/** The 431 of a request with more header lines than MAX_REQUEST_HEADERS, before routing. */
export function tooManyHeaders(request: IncomingMessage): HttpException | undefined {
  // rawHeaders alternates names and values; Node's truncation at 2,000 still exceeds the bound.
  if (request.rawHeaders.length / 2 <= MAX_REQUEST_HEADERS) return undefined;
  // Nest's HttpStatus has no 431.
  return new HttpException('Request Header Fields Too Large', 431);
}
