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
  /**
   * Items of the workspace with ids `<workspace id>-<suffix>`, inserted in the given order, with
   * the instant `since` filters on (lastSeen, createdAt) when given.
   */
  seed: (
    workspace: Workspace,
    rows: [suffix: string, intentScore: number, sinceColumn?: string][],
  ) => Promise<void>;
}

/**
 * Order, paging, defaults and bounds: docs/api.md states them once for both lists, so both
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

/**
 * `since`, on the list's own column (lastSeen, createdAt): one table for both lists, so that they
 * cannot drift apart (they had: only one of them tried the `+0200` form).
 */
export function itFiltersSinceLikeTheContract({ path, app, seed }: OrderedList): void {
  const list = (key: string, query = '') => getWithKey(app().app, `${path}${query}`, key);
  const suffixes = (workspace: Workspace, data: { id: string }[]) =>
    data.map(({ id }) => id.slice(workspace.id.length + 1));
  let tenant: { workspace: Workspace; key: string };

  beforeAll(async () => {
    tenant = await createTenant(app().prisma);
    await seed(tenant.workspace, [
      ['dayBefore', 10, '2026-02-19T23:59:59.999Z'],
      ['after', 20, '2026-02-20T17:30:00.001Z'],
      ['dayStart', 30, '2026-02-20T00:00:00.000Z'],
      ['at', 40, '2026-02-20T17:30:00.000Z'],
      ['before', 50, '2026-02-20T17:29:59.999Z'],
    ]);
  });

  it.each([
    ['absent', '', ['before', 'at', 'dayStart', 'after', 'dayBefore']],
    ['exactly at an item (inclusive)', '2026-02-20T17:30:00.000Z', ['at', 'after']],
    ['one ms before an item', '2026-02-20T17:29:59.999Z', ['before', 'at', 'after']],
    ['without milliseconds', '2026-02-20T17:30:00Z', ['at', 'after']],
    ['without an offset: read as UTC', '2026-02-20T17:30:00', ['at', 'after']],
    ['with ms and no offset: read as UTC', '2026-02-20T17:30:00.000', ['at', 'after']],
    ['with offset +02:00 (sent as %2B)', '2026-02-20T19:30:00.000%2B02:00', ['at', 'after']],
    // Form encoding turns an unencoded `+` into a space: the service reads it back as `+`.
    ['with offset +02:00 sent unencoded', '2026-02-20T19:30:00.000+02:00', ['at', 'after']],
    ['with offset +0200 sent unencoded', '2026-02-20T19:30:00+0200', ['at', 'after']],
    ['with offset -05:00', '2026-02-20T12:30:00-05:00', ['at', 'after']],
    ['one ms after an item (exclusive)', '2026-02-20T17:30:00.001Z', ['after']],
    // Finer than a millisecond: exact. Stored times have milliseconds, so an instant between two
    // of them compares like the next one up; digits past the milliseconds are never cut.
    ['nine zero digits: exactly at an item', '2026-02-20T17:30:00.000000000Z', ['at', 'after']],
    ['1 ns after an item (exclusive)', '2026-02-20T17:30:00.000000001Z', ['after']],
    ['100 ns after an item (exclusive)', '2026-02-20T17:30:00.0000001Z', ['after']],
    ['1 ns before the next ms', '2026-02-20T17:30:00.000999999Z', ['after']],
    ['1 ns after the last item', '2026-02-20T17:30:00.001000001Z', []],
    ['1 ns after an item, no offset', '2026-02-20T17:30:00.000000001', ['after']],
    ['1 ns after an item, offset +02:00', '2026-02-20T19:30:00.000000001%2B02:00', ['after']],
    ['1 ns after an item, offset -0530', '2026-02-20T12:00:00,000000001-0530', ['after']],
    // ... rolling over into the next second and minute, the next day.
    ['1 ns after an item at .999', '2026-02-20T17:29:59.999000001Z', ['at', 'after']],
    ['.999999999 before an item', '2026-02-20T17:29:59.999999999Z', ['at', 'after']],
    [
      '1 ns after an item at 23:59:59.999',
      '2026-02-19T23:59:59.999000001Z',
      ['before', 'at', 'dayStart', 'after'],
    ],
    [
      '1 ns after an item at 23:59:59.999, offset -01:00',
      '2026-02-19T22:59:59.9990001-01:00',
      ['before', 'at', 'dayStart', 'after'],
    ],
    ['a date: midnight UTC', '2026-02-20', ['before', 'at', 'dayStart', 'after']],
    ['after every item', '2026-02-21', []],
    ['in year 10000 once in UTC', '9999-12-31T23:59:59-01:00', []],
    ['in year 0001', '0001-01-01', ['before', 'at', 'dayStart', 'after', 'dayBefore']],
    // ISO 8601 dates all the same, before the first year PostgreSQL stores (1 AD).
    ['in year 0000', '0000-01-01', ['before', 'at', 'dayStart', 'after', 'dayBefore']],
    [
      'in year 0000 once in UTC',
      '0001-01-01T00:00:00%2B01:00',
      ['before', 'at', 'dayStart', 'after', 'dayBefore'],
    ],
  ])('since %s', async (_case, since, expected) => {
    const response = await list(tenant.key, since ? `?since=${since}` : '');

    expect(response.status).toBe(200);
    expect(response.body.total).toBe(expected.length);
    expect(suffixes(tenant.workspace, response.body.data)).toStrictEqual(expected);
  });

  describe('below a millisecond, across a year', () => {
    let year: { workspace: Workspace; key: string };

    beforeAll(async () => {
      year = await createTenant(app().prisma);
      await seed(year.workspace, [
        ['yearEnd', 10, '2023-12-31T23:59:59.999Z'],
        ['newYear', 20, '2024-01-01T00:00:00.000Z'],
        ['ten', 30, '2023-12-31T10:00:00.000Z'],
        ['tenPlus1ms', 40, '2023-12-31T10:00:00.001Z'],
      ]);
    });

    it.each([
      [
        'exactly at an item',
        '2023-12-31T10:00:00.000Z',
        ['tenPlus1ms', 'ten', 'newYear', 'yearEnd'],
      ],
      [
        '1 ns after an item',
        '2023-12-31T10:00:00.000000001Z',
        ['tenPlus1ms', 'newYear', 'yearEnd'],
      ],
      [
        '1 ns after an item, offset +05',
        '2023-12-31T15:00:00.000000001%2B05',
        ['tenPlus1ms', 'newYear', 'yearEnd'],
      ],
      [
        '.999999999 before an item, rolling the hour',
        '2023-12-31T09:59:59.999999999Z',
        ['tenPlus1ms', 'ten', 'newYear', 'yearEnd'],
      ],
      ['exactly at the last ms of the year', '2023-12-31T23:59:59.999Z', ['newYear', 'yearEnd']],
      [
        '1 ns before the last ms of the year',
        '2023-12-31T23:59:59.998999999Z',
        ['newYear', 'yearEnd'],
      ],
      ['1 ns after the last ms of the year', '2023-12-31T23:59:59.999000001Z', ['newYear']],
      ['1 ns before the new year', '2023-12-31T23:59:59.999999999Z', ['newYear']],
      [
        '1 ns after the last ms, offset +01:00',
        '2024-01-01T00:59:59.999000001%2B01:00',
        ['newYear'],
      ],
      ['1 ns after the last ms, offset -01:00', '2023-12-31T22:59:59,9999999-01:00', ['newYear']],
      ['1 ns after the new year', '2024-01-01T00:00:00.000000001Z', []],
    ])('since %s', async (_case, since, expected) => {
      const response = await list(year.key, `?since=${since}`);

      expect(response.status).toBe(200);
      expect(response.body.total).toBe(expected.length);
      expect(suffixes(year.workspace, response.body.data)).toStrictEqual(expected);
    });
  });

  it('counts in total every match across pages, not the page', async () => {
    const response = await list(tenant.key, '?since=2026-02-20&limit=1&offset=1');

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ total: 4, limit: 1, offset: 1 });
    expect(suffixes(tenant.workspace, response.body.data)).toStrictEqual(['at']);
  });

  it('gives 200, no data and the true total for an offset past the end of the matches', async () => {
    const response = await list(tenant.key, '?since=2026-02-20T17:30:00Z&offset=2');

    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({ total: 2, limit: 50, offset: 2, data: [] });
  });
}
