import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { perRoute } from '../common/per-route';
import {
  missingScopes,
  missingScopesMessage,
  PARAMETER_SCOPES,
  type ParameterScopes,
  REQUIRED_SCOPES,
  type Scope,
  scopesNeeded,
} from './scopes';

/**
 * After the key guard: a key restricted to some scopes is refused the routes that need another (and
 * a route's parameters that need another, given: the companies list's `visitedPage`),
 * with 403 `FORBIDDEN` naming what it lacks and RFC 6750's
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`. Before the in-flight and
 * per-minute limits: such a request costs nothing of either, as it reads nothing.
 */
@Injectable()
export class ScopeGuard implements CanActivate {
  private readonly requiredScopes = perRoute((handler, controller) =>
    this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, [handler, controller]),
  );
  private readonly parameterScopes = perRoute((handler) =>
    this.reflector.get<ParameterScopes | undefined>(PARAMETER_SCOPES, handler),
  );

  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const { auth } = request;
    if (!auth) return true;
    const parameters = this.parameterScopes(context);
    const required = scopesNeeded(
      this.requiredScopes(context),
      parameters,
      parameters ? Object.keys(request.query) : [],
    );
    const missing = missingScopes(auth.scopes, required);
    if (missing.length === 0) return true;
    context
      .switchToHttp()
      .getResponse<Response>()
      .setHeader(
        'WWW-Authenticate',
        `Bearer error="insufficient_scope", scope="${missing.join(' ')}"`,
      );
    throw new ForbiddenException(missingScopesMessage(missing));
  }
}
