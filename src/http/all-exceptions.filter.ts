import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Inject,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { Logger } from 'pino';
import { ROOT_LOGGER } from '../logging/app-logger';
import { redactApiKeys } from '../logging/key-redaction';
import { requestIdOf } from '../logging/request-log';
import {
  isDatabaseUnavailable,
  isPoolSaturated,
  retryAfterSeconds,
} from '../database/database-errors';
import { NotModifiedException } from './conditional-requests';
import { markRefusal } from '../logging/refusal-reason';
import { LimitRefusal } from './refusals';
import type { ErrorEnvelopeDto } from './error-envelope.dto';

// Fixed texts: an error body never echoes internals, SQL, or the caller's input.
const MESSAGES: Partial<Record<HttpStatus, string>> = {
  [HttpStatus.UNAUTHORIZED]: 'Unauthorized',
  [HttpStatus.NOT_FOUND]: 'Not Found',
  [HttpStatus.TOO_MANY_REQUESTS]: 'Too Many Requests',
  [HttpStatus.SERVICE_UNAVAILABLE]: 'Service temporarily unavailable',
  [HttpStatus.INTERNAL_SERVER_ERROR]: 'Internal server error',
};

// The answer to `GET /`, which a person with a browser may try first: still the 404 of a path the
// API does not have, saying where the API and its reference are.
const ROOT_NOT_FOUND =
  'Not Found: the API is under /v1; its reference is at /docs and its OpenAPI document at /v1/openapi.json';

/** Owns every error response: the envelope, its status, and nothing that leaks internals. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    // Not an error: a conditional read whose ETag still matches (conditional-read.guard.ts).
    if (exception instanceof NotModifiedException) {
      // No body, so no type of one (set for every answer by response-headers.ts).
      response.removeHeader('Content-Type');
      response.status(HttpStatus.NOT_MODIFIED).end();
      return;
    }
    const status = this.statusOf(exception);

    if (status === HttpStatus.UNAUTHORIZED) response.setHeader('WWW-Authenticate', 'Bearer');
    if (exception instanceof LimitRefusal) markRefusal(response, exception.reason);
    else if (status === HttpStatus.TOO_MANY_REQUESTS) markRefusal(response, 'rate_limit');
    if (status === HttpStatus.INTERNAL_SERVER_ERROR) {
      const text = exception instanceof Error ? (exception.stack ?? exception.message) : exception;
      this.log(request, 'error', typeof text === 'string' ? text : JSON.stringify(text));
    } else if (status === HttpStatus.SERVICE_UNAVAILABLE && !(exception instanceof LimitRefusal)) {
      const reason = exception instanceof Error ? exception.message : '';
      if (isPoolSaturated(exception)) markRefusal(response, 'overload');
      this.log(request, 'warn', `Database unavailable: ${reason}`);
      // When to try again: soon after a burst that saturated the pool, later after a failure.
      response.setHeader('Retry-After', String(retryAfterSeconds(exception)));
    }

    const message =
      status === HttpStatus.NOT_FOUND && request.path === '/'
        ? ROOT_NOT_FOUND
        : this.messageOf(exception, status);
    const body = errorEnvelope(status, message, request.originalUrl);
    response.status(status).json(body);
  }

  /** With the request's id, like the request's own line (request-log.ts). */
  private log(request: Request, level: 'error' | 'warn', message: string): void {
    this.logger[level](
      { requestId: requestIdOf(request), context: AllExceptionsFilter.name },
      message,
    );
  }

  private statusOf(exception: unknown): HttpStatus {
    if (exception instanceof HttpException) return exception.getStatus();
    if (isDatabaseUnavailable(exception)) return HttpStatus.SERVICE_UNAVAILABLE;
    return HttpStatus.INTERNAL_SERVER_ERROR;
  }

  private messageOf(exception: unknown, status: HttpStatus): string | string[] {
    // Written by the service, with nothing of the caller's in it.
    if (exception instanceof LimitRefusal) return exception.message;
    const fixed = MESSAGES[status];
    if (fixed) return fixed;
    // Validation errors carry one message per violated constraint; other HttpExceptions theirs.
    if (exception instanceof HttpException) {
      const response = exception.getResponse();
      const { message } = (typeof response === 'string' ? { message: response } : response) as {
        message?: unknown;
      };
      // Any other 400 comes from the framework (a path it could not decode), in words that
      // repeat the caller's input: a fixed text instead.
      if (status === HttpStatus.BAD_REQUEST && !Array.isArray(message)) return 'Bad Request';
      // A validation message names the parameter at fault, whose name may be a key.
      if (typeof message === 'string') return redactApiKeys(message);
      if (Array.isArray(message)) {
        return (message as unknown[]).map((entry) =>
          typeof entry === 'string' ? redactApiKeys(entry) : String(entry),
        );
      }
      return exception.message;
    }
    return 'Internal server error';
  }
}

/** `NOT_FOUND`, `TOO_MANY_REQUESTS`: Nest's name of the status, else HTTP's reason in its form. */
/** The envelope of an error answer to a request for `url` (as received). */
export function errorEnvelope(
  status: number,
  message: string | string[],
  url: string,
): ErrorEnvelopeDto {
  return {
    statusCode: status,
    message,
    error: errorNameOf(status),
    // The request as received, with key-shaped values replaced however they were encoded: a key
    // sent in the query string or the path (`?api_key=st_...`) is not repeated back, to a caller
    // who may not be its owner, nor to whatever logs the response on the way.
    path: redactApiKeys(url),
    timestamp: new Date().toISOString(),
  };
}

export function errorNameOf(status: number): string {
  // Undefined for a status the enum lacks (431), whatever its index type says.
  const nestName: string | undefined = HttpStatus[status];
  return nestName ?? (STATUS_CODES[status] ?? 'Error').toUpperCase().replace(/\W+/g, '_');
}
