import type { Workspace } from '../../src/generated/prisma/client';
import type { TestApp } from './app';
import { createTenant, getWithKey, pageThrough } from './http';

export interface OrderedList {
  /** `/v1/companies` or `/v1/leads`. */
  path: string;
  /** What one item is called in the tests' names. */
  noun: string;
  /** The app of the enclosing spec file, created in its beforeAll. */
  app: () => TestApp;
  /** Items of the workspace with ids `<workspace id>-<suffix>`, inserted in the given order. */
  seed: (workspace: Workspace, rows: [suffix: string, intentScore: number][]) => Promise<void>;
}

/**
 * Order, paging, defaults and bounds: decisions.md states them once for both lists, so both
 * spec files run these same tests (inside their own describe).
 */
export function itOrdersAndPagesLikeTheContract({ path, noun, app, seed }: OrderedList): void {
  const list = (key: string, query = '') => getWithKey(app().app, `${path}${query}`, key);
  const suffixes = (workspace: Workspace, data: { id: string }[]) =>
    data.map(({ id }) => id.slice(workspace.id.length + 1));

  it('is ordered by intentScore descending, ties by id compared byte by byte', async () => {
    const { workspace, key } = await createTenant(app().prisma);
    await seed(workspace, [
      ['a', 90],
      ['c', 50],
      ['B', 90],
      ['9', 90],
      ['C', 10],
      ['A', 90],
      ['b', 50],
      ['10', 90],
      ['x', 90.5],
    ]);

    const response = await list(key);

    expect(response.status).toBe(200);
    expect(suffixes(workspace, response.body.data)).toStrictEqual(
      ['x', '10', '9', 'A', 'B', 'a', 'b', 'c', 'C'], // '10' < '9' < 'A' < 'B' < 'a' in bytes
    );
  });

  describe('paged', () => {
    let tenant: { workspace: Workspace; key: string };
    let everything: string[];

    beforeAll(async () => {
      tenant = await createTenant(app().prisma);
      await seed(tenant.workspace, [
        ['m', 40],
        ['B', 70],
        ['a', 70],
        ['Z', 70],
        ['k', 40],
        ['D', 95],
        ['c', 40],
        ['A', 40],
        ['e', 5],
      ]);
      const response = await list(tenant.key, '?limit=200');
      everything = (response.body.data as { id: string }[]).map(({ id }) => id);
    });

    it('reads the whole ordered list in one page of 200', () => {
      expect(
        suffixes(
          tenant.workspace,
          everything.map((id) => ({ id })),
        ),
      ).toStrictEqual(['D', 'B', 'Z', 'a', 'A', 'c', 'k', 'm', 'e']);
    });

    it.each([1, 2, 3, 4, 8, 9, 10])(
      `with limit=%i concatenates to the whole list, each ${noun} exactly once`,
      async (pageSize) => {
        const ids = await pageThrough(app().app, path, tenant.key, pageSize);

        expect(ids).toStrictEqual(everything);
      },
    );
  });

  it('applies limit 50 and offset 0 by default, and echoes them as numbers', async () => {
    const { workspace, key } = await createTenant(app().prisma);
    const rows = Array.from({ length: 51 }, (_, i): [string, number] => [
      String(i).padStart(2, '0'),
      50,
    ]);
    await seed(workspace, rows);

    const response = await list(key);

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 51, limit: 50, offset: 0 });
    expect(suffixes(workspace, response.body.data)).toStrictEqual(
      rows.slice(0, 50).map(([suffix]) => suffix),
    );
  });

  it.each([
    ['?limit=1', { limit: 1, offset: 0 }, ['a']],
    ['?limit=200', { limit: 200, offset: 0 }, ['a', 'b', 'c']],
    ['?offset=0', { limit: 50, offset: 0 }, ['a', 'b', 'c']],
    ['?limit=2&offset=1', { limit: 2, offset: 1 }, ['b', 'c']],
    ['?offset=3', { limit: 50, offset: 3 }, []],
    ['?offset=1000&limit=10', { limit: 10, offset: 1000 }, []],
  ])('accepts %s: 200, the applied values and the true total', async (query, applied, page) => {
    const { workspace, key } = await createTenant(app().prisma);
    await seed(workspace, [
      ['c', 10],
      ['a', 30],
      ['b', 20],
    ]);

    const response = await list(key, query);

    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({ total: 3, ...applied, data: expect.any(Array) });
    expect(suffixes(workspace, response.body.data)).toStrictEqual(page);
  });

  it.each([
    ['?limit=0', 'limit'],
    ['?limit=201', 'limit'],
    ['?offset=-1', 'offset'],
  ])('refuses %s with a 400 naming %s', async (query, parameter) => {
    const { key } = await createTenant(app().prisma);

    const response = await list(key, query);

    expect(response.status).toBe(400);
    expect(response.body.message).toStrictEqual([expect.stringMatching(`^${parameter}\\b`)]);
  });
}
