import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { holdsApiKey } from '../logging/key-redaction';

// A caller's request id is echoed only if it is short and plain, so it cannot inject into logs.
export const REQUEST_ID_MAX_LENGTH = 128;
export const SANE_REQUEST_ID = new RegExp(`^[A-Za-z0-9._:-]{1,${REQUEST_ID_MAX_LENGTH}}$`);

/**
 * The request's id (the caller's, when sane), the no-store policy of every answer, and that every
 * answer depends on Accept-Encoding (http/compression.ts), compressed or not.
 */
export function setCommonHeaders(request: IncomingMessage, response: ServerResponse): void {
  const sent = request.headers['x-request-id'];
  const given = typeof sent === 'string' ? sent : undefined;
  // A key-shaped id (`req_st_...`) is not echoed nor logged either: it is replaced like any other.
  const requestId =
    given && SANE_REQUEST_ID.test(given) && !holdsApiKey(given) ? given : randomUUID();
  request.headers['x-request-id'] = requestId;
  response.setHeader('X-Request-Id', requestId);
  // Every answer is private to one workspace: no shared or browser cache may keep it.
  response.setHeader('Cache-Control', 'no-store');
  response.setHeader('Vary', 'Accept-Encoding');
}
