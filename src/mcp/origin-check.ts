import { ForbiddenException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * MCP's Streamable HTTP transport asks servers to validate `Origin` (against DNS rebinding: a web
 * page the user visits must not reach a local server through their browser). Agents call from
 * servers and send none: served. A browser's request from an origin not on MCP_ALLOWED_ORIGINS:
 * 403 before the key is even looked at, so nothing runs and nothing is counted.
 */
export function originCheck(allowed: readonly string[]) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    const origin = request.headers.origin;
    if (origin === undefined || allowed.includes(origin)) return next();
    next(new ForbiddenException('This Origin is not allowed to call the MCP endpoint'));
  };
}

/** MCP_ALLOWED_ORIGINS as a list (empty when unset). */
export function allowedOrigins(setting: string | undefined): string[] {
  return (setting ?? '').split(',').filter((origin) => origin !== '');
}
