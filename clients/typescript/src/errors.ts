import type { ErrorEnvelope } from './types.js';

/** An error response of the API: its status, its envelope when the body is one, its request id. */
export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly status: number,
    /** `{statusCode, message, error, path, timestamp}`; null when the body is not one (a proxy's page). */
    readonly envelope: ErrorEnvelope | null,
    /** The response's `X-Request-Id`: quote it when reporting a problem. */
    readonly requestId: string | null,
    /** How many requests were sent for this call, retries included. */
    readonly attempts: number,
  ) {
    super(describe(status, envelope));
  }
}

/** 400: a parameter is invalid; `envelope.message` lists each violated constraint. Never retried. */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}

/**
 * 401: the key is absent, unknown, revoked, expired, or its workspace has no API access. Never
 * retried.
 */
export class UnauthorizedError extends ApiError {
  override name = 'UnauthorizedError';
}

/**
 * 403: the key is valid but restricted to scopes without the one this read needs; the message
 * names what it lacks. Never retried.
 */
export class ForbiddenError extends ApiError {
  override name = 'ForbiddenError';
}

/** 404: no item with this id in the key's workspace (`getCompany`, `getLead`). Never retried. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}

/**
 * 410 from a change feed: the cursor is older than deletions the service has since pruned, so
 * changes may have been missed. Start the feed again without a cursor and rebuild the copy:
 * remove every item that the fresh pass does not bring. Never retried.
 */
export class CursorExpiredError extends ApiError {
  override name = 'CursorExpiredError';
}

/** 429 still received after the configured number of waits for `Retry-After`. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}

/** 500: a fault of the service for this request. Not retried: see the README. */
export class InternalServerError extends ApiError {
  override name = 'InternalServerError';
}

/** 503 still received after the configured number of retries with backoff. */
export class ServiceUnavailableError extends ApiError {
  override name = 'ServiceUnavailableError';
}

/** No response at all (connection refused or reset, DNS failure), after every retry. */
export class NetworkError extends Error {
  override name = 'NetworkError';

  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`No response from the API after ${attempts} attempts`, { cause });
  }
}

/** The typed error of a response that will not be retried (or no longer). */
export async function errorFromResponse(response: Response, attempts: number): Promise<ApiError> {
  const envelope = parseEnvelope(await response.text());
  const requestId = response.headers.get('x-request-id');
  const args = [response.status, envelope, requestId, attempts] as const;
  switch (response.status) {
    case 400:
      return new BadRequestError(...args);
    case 401:
      return new UnauthorizedError(...args);
    case 403:
      return new ForbiddenError(...args);
    case 404:
      return new NotFoundError(...args);
    case 410:
      return new CursorExpiredError(...args);
    case 429:
      return new RateLimitError(...args);
    case 500:
      return new InternalServerError(...args);
    case 503:
      return new ServiceUnavailableError(...args);
    default:
      return new ApiError(...args);
  }
}

function parseEnvelope(text: string): ErrorEnvelope | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { statusCode, message, error, path, timestamp } = body as Record<string, unknown>;
  const messageOk =
    typeof message === 'string' ||
    (Array.isArray(message) && message.every((entry) => typeof entry === 'string'));
  if (
    typeof statusCode !== 'number' ||
    !messageOk ||
    typeof error !== 'string' ||
    typeof path !== 'string' ||
    typeof timestamp !== 'string'
  ) {
    return null;
  }
  return { statusCode, message, error, path, timestamp };
}

function describe(status: number, envelope: ErrorEnvelope | null): string {
  if (!envelope) return `HTTP ${status}`;
  const message = Array.isArray(envelope.message) ? envelope.message.join('; ') : envelope.message;
  return `${status} ${envelope.error}: ${message}`;
}
