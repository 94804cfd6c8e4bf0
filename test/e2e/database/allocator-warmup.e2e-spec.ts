import { Client, Pool } from 'pg';
import { ALLOCATOR_WARMUP_SQL, poolConfig } from '../../../src/database/pool-config';
import { createTestApp, type TestApp } from '../../support/app';
import { createTestDatabase, withServer, type TestDatabase } from '../../support/database';
import { createTenant, getWithKey } from '../../support/http';
import { until } from '../../support/until';

/*
 * Each new connection of the pools first makes and frees a block in its backend, so that glibc's
 * malloc there stops handing the memory of every statement back to the kernel (pool-config.ts,
 * ALLOCATOR_WARMUP_BYTES; docs/scaling.md). What it saves (page faults, the database's CPU) is
 * measured by the benchmark, not here: it shows only on large plans, and only with glibc.
 */

describe('a new connection of a pool', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('has run the warm-up in its backend before the pool hands it out', async () => {
    const pool = new Pool(poolConfig(database.directUrl, 'startup', 1));
    const client = await pool.connect();
    // The backend's pid (the server's BackendKeyData): node-postgres keeps it, @types/pg omits it.
    const { processID } = client as unknown as { processID: number };
    try {
      // Seen from another session, before this client has sent anything of its own.
      const last = await until('the backend idle after its first statement', () =>
        withServer(async (server) => {
          const { rows } = await server.query<{ query: string; state: string }>(
            'SELECT query, state FROM pg_stat_activity WHERE pid = $1',
            [processID],
          );
          return rows[0]?.state === 'idle' && rows[0].query;
        }),
      );
      expect(last).toBe(ALLOCATOR_WARMUP_SQL);
    } finally {
      client.release();
      await pool.end();
    }
  });
});

describe("the service's pools", () => {
  let t: TestApp;
  // Set before the app opens any connection: every statement of every connection, in order.
  let statements: jest.SpyInstance;
  beforeAll(async () => {
    statements = jest.spyOn(Client.prototype, 'query');
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    statements.mockRestore();
  });

  it("run the warm-up first on each connection, before the key's lookup and the page", async () => {
    const tenant = await createTenant(t.prisma);
    const response = await getWithKey(t.app, '/v1/companies', tenant.key);
    expect(response.status).toBe(200);
    const sent = new Map<unknown, string[]>();
    statements.mock.calls.forEach(([query], i) => {
      const connection: unknown = statements.mock.contexts[i];
      const text = typeof query === 'string' ? query : String((query as { text?: unknown }).text);
      sent.set(connection, [...(sent.get(connection) ?? []), text]);
    });
    const serving = [...sent.values()].filter((texts) =>
      texts.some((text) => /FROM api_keys|row_to_json\(envelope\)/.test(text)),
    );
    // The key's lookup (the priority pool) and the page (the read pool): two connections at least.
    expect(serving.length).toBeGreaterThanOrEqual(2);
    for (const texts of serving) expect(texts[0]).toBe(ALLOCATOR_WARMUP_SQL);
  });
});
