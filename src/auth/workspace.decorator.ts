import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthenticatedKey } from './api-key';

export type AuthenticatedWorkspace = AuthenticatedKey['workspace'];

/** The workspace of the request's API key: every query of a handler is scoped by it. */
export const Workspace = createParamDecorator(
  (_data: unknown, context: ExecutionContext): AuthenticatedWorkspace => {
    const auth = context.switchToHttp().getRequest<Request>().auth;
    // ApiKeyGuard is global and runs before any handler: no key, no handler.
    if (!auth)
      throw new Error('@Workspace() used on a route that ApiKeyGuard did not authenticate');
    return auth.workspace;
  },
);
