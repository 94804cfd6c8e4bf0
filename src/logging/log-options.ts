import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { type LevelWithSilent, type LoggerOptions, stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import { redactApiKeys } from './key-redaction';

/** The root logger's options: JSON lines, ISO times, and no secret in any line. */
export function loggerOptions(level: LevelWithSilent): LoggerOptions {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    // Headers are never logged (see requestLine); this covers an object logged by hand.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization'],
      censor: '[REDACTED]',
    },
    // Whatever a line holds (a message, an error's stack, a path, a request id), in whatever
    // encoding, key-shaped values do not reach the output (key-redaction.ts).
    hooks: { streamWrite: redactApiKeys },
  };
}

/**
 * pino-http's options: one JSON line per request (method, path, status, duration, request id,
 * workspace).
 */
export const httpLoggerOptions: Options = {
  // The id that setResponseHeaders chose and sent back as X-Request-Id: one id everywhere.
  genReqId: (request) => requestIdOf(request),
  customAttributeKeys: { reqId: 'requestId' },
  // Lines written through request.log (the error filter's) carry its id and nothing else; the
  // request line is built by requestLine.
  quietReqLogger: true,
  quietResLogger: true,
  customLogLevel: (_request, response, error) =>
    error || response.statusCode >= 500 ? 'error' : 'info',
  customSuccessObject: (request, response, fields: ResponseTime) =>
    requestLine(request, response, fields),
  // Without the synthetic "failed with status code" error: the filter logs the real one.
  customErrorObject: (request, response, _error, fields: ResponseTime) =>
    requestLine(request, response, fields),
};

interface ResponseTime {
  responseTime: number;
}

function requestIdOf(request: IncomingMessage): string {
  const id = request.headers['x-request-id'];
  return typeof id === 'string' ? id : randomUUID();
}

function requestLine(
  request: IncomingMessage,
  response: ServerResponse,
  { responseTime }: ResponseTime,
): Record<string, unknown> {
  // Express's request: the original URL (with its query) and the key's workspace, once known.
  const { originalUrl, auth } = request as Request;
  return {
    method: request.method,
    path: originalUrl ?? request.url,
    statusCode: response.statusCode,
    durationMs: responseTime,
    workspaceId: auth?.workspace.id,
  };
}
