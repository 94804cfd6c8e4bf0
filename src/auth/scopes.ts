import { SetMetadata } from '@nestjs/common';

/** What a key may read (`key create --scopes`); a key given none of them may read everything. */
export const SCOPES = ['companies:read', 'leads:read', 'changes:read', 'visits:read'] as const;
export type Scope = (typeof SCOPES)[number];

export const REQUIRED_SCOPES = 'requiredScopes';

/** The scopes a route needs, every one of them (ScopeGuard). */
export const RequiresScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** Query parameters that need scopes of their own (`visitedPage`: visits:read), by name. */
export type ParameterScopes = Record<string, Scope[]>;

export const PARAMETER_SCOPES = 'parameterScopes';

/** The scopes a route needs for some of its parameters, when they are given (ScopeGuard). */
export const RequiresScopesFor = (scopes: ParameterScopes) => SetMetadata(PARAMETER_SCOPES, scopes);

/** What a request needs: its route's scopes, and those of the parameters it gives. */
export function scopesNeeded(
  route: readonly Scope[] = [],
  parameters: ParameterScopes = {},
  given: readonly string[],
): Scope[] {
  const needed = new Set(route);
  // Own names only: a query may name `constructor` or `__proto__`, which every object inherits.
  for (const name of given) {
    if (Object.hasOwn(parameters, name)) for (const scope of parameters[name]) needed.add(scope);
  }
  return [...needed];
}

/** What `required` asks that a key with `granted` lacks; an empty grant is every scope. */
export function missingScopes(granted: readonly string[], required: readonly Scope[]): Scope[] {
  if (granted.length === 0) return [];
  return required.filter((scope) => !granted.includes(scope));
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** What a key lacking scopes is told, over REST (the 403) and MCP (the tool's error) alike. */
export function missingScopesMessage(missing: readonly Scope[]): string {
  return `This key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
}
