import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { ServerResponse } from 'node:http';
import { perRoute } from '../common/per-route';
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
export function announceKeyExpiration(response: ServerResponse, auth: AuthenticatedKey): void {
  if (auth.expiresAt) response.setHeader(KEY_EXPIRATION_HEADER, auth.expiresAt.toISOString());
}

/**
 * Every route needs a valid key. All refusals are the same 401, whatever the reason, so that the
 * reason cannot be told; malformed keys are refused before any database query.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly isPublic = perRoute(
    (handler, controller) =>
      this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [handler, controller]) ===
      true,
  );

  constructor(
    private readonly keys: ApiKeysService,
    private readonly failures: AuthFailureLimiter,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const presented = this.keys.presentedKey(request);
    const address = request.ip ?? request.socket.remoteAddress ?? 'unknown';

    if (presented !== undefined && !this.failures.isBlocked(address)) {
      const auth = await this.keys.authenticate(presented);
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
