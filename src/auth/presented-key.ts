import type { IncomingMessage } from 'node:http';
import { isWellFormedApiKey } from './api-key';

/** The key a request presents, well formed, and what it is stored as. */
export interface PresentedKey {
  key: string;
  hash: string;
}

// The scheme is case-insensitive (RFC 9110, 11.1), then exactly one space as RFC 6750 writes it;
// the key's own pattern is checked by isWellFormedApiKey.
const BEARER = /^Bearer (\S+)$/i;

/** The bearer token of the request's one Authorization field, if it has one. */
export function bearerKey(
  request: Pick<IncomingMessage, 'headers' | 'headersDistinct'>,
): string | undefined {
  // A request without one stops here: Node makes headersDistinct, a copy of every header, on
  // first use.
  if (request.headers.authorization === undefined) return undefined;
  // Node keeps the first of several Authorization fields and drops the others; a request with
  // more than one is malformed (RFC 9110, 5.3) and refused like any other.
  const [authorization = '', ...others] = request.headersDistinct.authorization ?? [];
  return others.length === 0 ? BEARER.exec(authorization)?.[1] : undefined;
}

const PRESENTED = Symbol('presented key');

type Presenting = IncomingMessage & { [PRESENTED]?: PresentedKey | null };

/**
 * The request's bearer key if it is well formed, with its hash: read and hashed once per request,
 * whoever asks first (the in-flight count at arrival, or the key guard).
 */
export function presentedKey(
  request: IncomingMessage,
  hash: (key: string) => string,
): PresentedKey | undefined {
  const presenting = request as Presenting;
  if (presenting[PRESENTED] === undefined) {
    const key = bearerKey(request);
    presenting[PRESENTED] =
      key !== undefined && isWellFormedApiKey(key) ? { key, hash: hash(key) } : null;
  }
  return presenting[PRESENTED] ?? undefined;
}
