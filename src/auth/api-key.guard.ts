import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { isWellFormedApiKey } from './api-key';
import type { AuthenticatedKey } from './api-key';
import { ApiKeysService } from './api-keys.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { IS_PUBLIC } from './public.decorator';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by ApiKeyGuard once the bearer key is accepted. */
    auth?: AuthenticatedKey;
  }
}

/** On every answer to a key that expires (or is rolled): when it stops working, ISO 8601 UTC. */
export const KEY_EXPIRATION_HEADER = 'API-Key-Expiration';

/** Like GitHub's token-expiration header: the instant an accepted key stops working, if it does. */
export function announceKeyExpiration(response: Response, auth: AuthenticatedKey): void {
  if (auth.expiresAt) response.setHeader(KEY_EXPIRATION_HEADER, auth.expiresAt.toISOString());
}

// The scheme is case-insensitive (RFC 9110, 11.1), then exactly one space as RFC 6750 writes it;
// the key's own pattern is checked by isWellFormedApiKey.
const BEARER = /^Bearer (\S+)$/i;

/** The bearer token of the request's one Authorization field, if it has one. */
export function bearerKey(request: Pick<Request, 'headersDistinct'>): string | undefined {
  // Node keeps the first of several Authorization fields and drops the others; a request with
  // more than one is malformed (RFC 9110, 5.3) and refused like any other.
  const [authorization = '', ...others] = request.headersDistinct.authorization ?? [];
  return others.length === 0 ? BEARER.exec(authorization)?.[1] : undefined;
}

/**
 * Every route needs a valid key. All refusals are the same 401, whatever the reason, so that the
 * reason cannot be told; malformed keys are refused before any database query.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly failures: AuthFailureLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const key = bearerKey(request);
    const address = request.ip ?? request.socket.remoteAddress ?? 'unknown';

    if (key && isWellFormedApiKey(key) && !this.failures.isBlocked(address)) {
      const auth = await this.keys.authenticate(key);
      if (auth) {
        request.auth = auth;
        announceKeyExpiration(http.getResponse<Response>(), auth);
        return true;
      }
    }
    await this.failures.recordFailure(address, http.getResponse<Response>());
    throw new UnauthorizedException();
  }
}
