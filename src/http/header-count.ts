import { HttpException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * The most header lines a request may have: Apache httpd's LimitRequestFields default. Node's
 * parser keeps only the first 2,000 and drops the rest without a word (maxHeadersCount), so that
 * a key sent after the 2,000th header was a 401, and empty lines passed the 16 KiB bound on the
 * header bytes (16,000 of them, 64 KB, were read).
 */
export const MAX_REQUEST_HEADERS = 100;

/** A request with more header lines than MAX_REQUEST_HEADERS: 431, before routing. */
export function refuseTooManyHeaders(request: Request, _: Response, next: NextFunction): void {
  // rawHeaders alternates names and values; Node's truncation at 2,000 still exceeds the bound.
  if (request.rawHeaders.length / 2 > MAX_REQUEST_HEADERS) {
    // Nest's HttpStatus has no 431.
    next(new HttpException('Request Header Fields Too Large', 431));
    return;
  }
  next();
}
