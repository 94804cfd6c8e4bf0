import type { Request, RequestHandler, Response } from 'express';
import type { ServerResponse } from 'node:http';
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

type Header = readonly [name: string, value: string];

/**
 * The headers that helmet's middlewares set, read once: they are the same on every response of
 * a policy, and setting them from a list costs a tenth of running a dozen middlewares each time.
 */
function headersSetBy(...middlewares: RequestHandler[]): Header[] {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: unknown) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
  };
  for (const middleware of middlewares) {
    middleware({} as Request, recorder as unknown as Response, (error?: unknown) => {
      if (error) throw new Error('helmet refused its own settings', { cause: error });
    });
  }
  return [...headers];
}

const apiHeaders = headersSetBy(common, apiPolicy);
const docsHeaders = headersSetBy(common, docsPolicy);

/** The security headers of an API answer (not /docs'), for an answer made before Express. */
export function setApiSecurityHeaders(response: ServerResponse): void {
  for (const [name, value] of apiHeaders) response.setHeader(name, value);
}

/** The security headers of an answer to this path (its policy: /docs' or the API's). */
export function setSecurityHeaders(path: string, response: ServerResponse): void {
  for (const [name, value] of isDocs(path) ? docsHeaders : apiHeaders) {
    response.setHeader(name, value);
  }
}
