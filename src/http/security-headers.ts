import type { NextFunction, Request, Response } from 'express';
import helmet, { contentSecurityPolicy } from 'helmet';

/** Where the OpenAPI module serves Swagger UI: the one place of the service that renders HTML. */
export const DOCS_PATH = '/docs';

// The same headers on every response; the Content-Security-Policy is chosen per path below.
const common = helmet({
  contentSecurityPolicy: false,
  // One year, this host only: the header is ignored over plain HTTP and takes effect once the
  // TLS terminator in front serves it over HTTPS. includeSubDomains and preload would bind every
  // host of the domain, a decision for the domain's owner, taken at the edge (docs/security.md).
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: false, preload: false },
  // No page of the service may be framed (clickjacking of /docs); CSP frame-ancestors says the same.
  xFrameOptions: { action: 'deny' },
  // URLs carry query strings: never hand them to another site.
  referrerPolicy: { policy: 'no-referrer' },
});

// JSON only: nothing in an API response may load, run, be framed or submit anything.
const apiPolicy = contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
});

// What Swagger UI's page needs, and no more: its scripts and styles from this origin, its inline
// <style> blocks, data: images, and fetches of the document from this origin. No
// upgrade-insecure-requests, which would break /docs on a plain-HTTP development host.
const docsPolicy = contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});

function isDocs(path: string): boolean {
  return path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`);
}

/** Security headers of every response (express middleware), before routing. */
export function securityHeaders(request: Request, response: Response, next: NextFunction): void {
  common(request, response, (error?: unknown) => {
    if (error) return next(error);
    (isDocs(request.path) ? docsPolicy : apiPolicy)(request, response, next);
  });
}
