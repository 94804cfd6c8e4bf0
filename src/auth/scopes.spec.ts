import { missingScopes, scopesNeeded } from './scopes';

describe('scopesNeeded', () => {
  const parameters = { visitedPage: ['visits:read' as const] };

  it("adds a parameter's scopes to the route's when the query names it", () => {
    expect(scopesNeeded(['companies:read'], parameters, ['limit', 'visitedPage'])).toEqual([
      'companies:read',
      'visits:read',
    ]);
    expect(scopesNeeded(['companies:read'], parameters, ['limit'])).toEqual(['companies:read']);
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])(
    'takes a query naming %s, which every object inherits, as a name without scopes',
    (name) => {
      expect(scopesNeeded(['companies:read'], parameters, [name])).toEqual(['companies:read']);
    },
  );
});

describe('missingScopes', () => {
  it('is empty for a key of every scope (an empty grant), else what the grant lacks', () => {
    expect(missingScopes([], ['visits:read'])).toEqual([]);
    expect(missingScopes(['companies:read'], ['companies:read', 'visits:read'])).toEqual([
      'visits:read',
    ]);
  });
});
