import { KEY_EXPIRATION_HEADER } from '../../../src/auth/api-key.guard';
import { generateApiKey } from '../../../src/auth/api-key';
import { type AdminRun, runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createApiKey, createWorkspace } from '../../support/factories';
import { getWithKey } from '../../support/http';

/*
 * Keys that expire and keys rolled with an overlap (docs/api.md, "Keys that expire"; the admin
 * tool's `key create --expires-in/--expires-at` and `key roll`). The server's clock is moved to
 * the admin tool's (the real one) first, then forward across the instants.
 */
const HOUR = 60 * 60 * 1000;

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  t.clock.advance(Date.now() - t.clock.now());
});

afterAll(async () => {
  await t.close();
});

const admin = (...argv: string[]): Promise<AdminRun> =>
  runAdminCommand({ DATABASE_URL: t.database.url }, ...argv);

async function adminJson<T>(...argv: string[]): Promise<T> {
  const run = await admin(...argv, '--json');
  expect(run).toMatchObject({ status: 0, stderr: '' });
  return JSON.parse(run.stdout) as T;
}

/** What a refused key gets, but for what differs between any two answers. */
function refusal(response: Awaited<ReturnType<typeof getWithKey>>) {
  const body = { ...(response.body as Record<string, unknown>), timestamp: undefined };
  const headers = { ...response.headers, date: undefined, 'x-request-id': undefined };
  return { status: response.status, body, headers };
}

describe('expiry', () => {
  it('serves the key with its expiry on every answer until the instant, then the 401 of an unknown key', async () => {
    const workspace = await createWorkspace(t.prisma);
    const expiresAt = new Date(t.clock.now() + HOUR);
    const { key } = await createApiKey(t.prisma, workspace.id, { expiresAt });

    for (const path of ['/v1/me', '/v1/companies', '/v1/leads?limit=1', '/v1/companies?limit=0']) {
      const response = await getWithKey(t.app, path, key);
      expect(response.headers[KEY_EXPIRATION_HEADER.toLowerCase()]).toBe(expiresAt.toISOString());
    }
    t.clock.advance(HOUR - 1);
    expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(200);

    t.clock.advance(1);
    const expired = await getWithKey(t.app, '/v1/me', key);
    const unknown = await getWithKey(t.app, '/v1/me', generateApiKey());
    expect(refusal(expired)).toEqual(refusal(unknown));
    expect(expired.status).toBe(401);
  });

  it('sends no expiry header for a key that does not expire', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { key } = await createApiKey(t.prisma, workspace.id);
    const response = await getWithKey(t.app, '/v1/me', key);
    expect(response.status).toBe(200);
    expect(response.headers[KEY_EXPIRATION_HEADER.toLowerCase()]).toBeUndefined();
  });

  it('key create --expires-in and --expires-at write the instant; key list shows it', async () => {
    const workspace = await createWorkspace(t.prisma);
    const before = Date.now();
    const inDays = await adminJson<{ id: string; expiresAt: string }>(
      'key',
      'create',
      '--workspace',
      workspace.id,
      '--name',
      'ninety days',
      '--expires-in',
      '90d',
    );
    const after = Date.now();
    const at = Date.parse(inDays.expiresAt);
    expect(at).toBeGreaterThanOrEqual(before + 90 * 24 * HOUR);
    expect(at).toBeLessThanOrEqual(after + 90 * 24 * HOUR);

    const fixed = await adminJson<{ id: string; expiresAt: string }>(
      'key',
      'create',
      '--workspace',
      workspace.id,
      '--name',
      'fixed',
      '--expires-at',
      '2099-01-31T12:00:00+01:00',
    );
    expect(fixed.expiresAt).toBe('2099-01-31T11:00:00.000Z');

    const listed = await adminJson<{ id: string; expiresAt: string | null }[]>(
      'key',
      'list',
      '--workspace',
      workspace.id,
    );
    expect(listed.map((k) => [k.id, k.expiresAt])).toEqual([
      [inDays.id, inDays.expiresAt],
      [fixed.id, fixed.expiresAt],
    ]);
  });

  it.each([
    [
      ['--expires-in', '90'],
      '--expires-in must be a whole number with a unit s, m, h or d (30s, 15m, 24h, 90d), not "90"',
    ],
    [
      ['--expires-in', '1.5d'],
      '--expires-in must be a whole number with a unit s, m, h or d (30s, 15m, 24h, 90d), not "1.5d"',
    ],
    [
      ['--expires-in', '0s'],
      '--expires-in must be a whole number with a unit s, m, h or d (30s, 15m, 24h, 90d), not "0s"',
    ],
    [
      ['--expires-at', 'tomorrow'],
      '--expires-at must be an ISO 8601 date-time such as 2027-01-31T00:00:00Z, not "tomorrow"',
    ],
    [
      ['--expires-in', '1d', '--expires-at', '2099-01-01'],
      'give --expires-in or --expires-at, not both',
    ],
    [
      ['--expires-at', '2020-01-01T00:00:00Z'],
      'the key would expire at 2020-01-01T00:00:00.000Z, which is not in the future',
    ],
  ])('key create %j is refused with one line, and writes no key', async (extra, message) => {
    const workspace = await createWorkspace(t.prisma);
    const run = await admin('key', 'create', '--workspace', workspace.id, '--name', 'x', ...extra);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toBe(`error: ${message}\n`);
    await expect(t.prisma.apiKey.count({ where: { workspaceId: workspace.id } })).resolves.toBe(0);
  });
});

describe('rolling', () => {
  interface Rolled {
    rolled: { id: string; expiresAt: string; rolledAt: string };
    successor: { id: string; name: string; expiresAt: string | null; key: string };
  }

  it('makes a successor at once; the old key works, with its end in the header, until the overlap ends', async () => {
    const workspace = await createWorkspace(t.prisma);
    const old = await createApiKey(t.prisma, workspace.id, { name: 'CRM sync' });

    const before = Date.now();
    const rolled = await adminJson<Rolled>('key', 'roll', '--id', old.id, '--overlap', '2h');
    const overlapEnd = Date.parse(rolled.rolled.expiresAt);
    expect(overlapEnd).toBeGreaterThanOrEqual(before + 2 * HOUR);
    expect(overlapEnd).toBeLessThanOrEqual(Date.now() + 2 * HOUR);
    expect(rolled.successor).toMatchObject({ name: 'CRM sync', expiresAt: null });

    const oldAnswer = await getWithKey(t.app, '/v1/me', old.key);
    expect(oldAnswer.status).toBe(200);
    expect(oldAnswer.headers[KEY_EXPIRATION_HEADER.toLowerCase()]).toBe(rolled.rolled.expiresAt);
    expect((await getWithKey(t.app, '/v1/me', rolled.successor.key)).status).toBe(200);

    t.clock.advance(overlapEnd - t.clock.now());
    expect((await getWithKey(t.app, '/v1/me', old.key)).status).toBe(401);
    const successor = await getWithKey(t.app, '/v1/me', rolled.successor.key);
    expect(successor.status).toBe(200);
    expect(successor.headers[KEY_EXPIRATION_HEADER.toLowerCase()]).toBeUndefined();
  });

  it('gives the successor of an expiring key the same lifetime, and ends the old one no later than it would have', async () => {
    const workspace = await createWorkspace(t.prisma);
    const created = await adminJson<{ id: string; createdAt: string; expiresAt: string }>(
      'key',
      'create',
      '--workspace',
      workspace.id,
      '--name',
      'short',
      '--expires-in',
      '1h',
    );
    const lifetime = Date.parse(created.expiresAt) - Date.parse(created.createdAt);

    // Overlap 24h (the default), but the key expires within the hour: it ends then.
    const rolled = await adminJson<Rolled>('key', 'roll', '--id', created.id);
    expect(rolled.rolled.expiresAt).toBe(created.expiresAt);
    const successor = await t.prisma.apiKey.findUniqueOrThrow({
      where: { id: rolled.successor.id },
    });
    expect(successor.expiresAt!.getTime() - successor.createdAt.getTime()).toBe(lifetime);
  });

  it('refuses to roll a key twice, a revoked key, or with an overlap over 7 days', async () => {
    const workspace = await createWorkspace(t.prisma);
    const once = await createApiKey(t.prisma, workspace.id);
    await adminJson<Rolled>('key', 'roll', '--id', once.id);
    const again = await admin('key', 'roll', '--id', once.id);
    expect(again.stderr).toMatch(
      /^error: key \S+ was rolled at \S+: roll its successor instead\n$/,
    );

    const revoked = await createApiKey(t.prisma, workspace.id, { revokedAt: new Date() });
    expect((await admin('key', 'roll', '--id', revoked.id)).stderr).toBe(
      `error: key ${revoked.id} is revoked: it cannot be rolled\n`,
    );

    const fresh = await createApiKey(t.prisma, workspace.id);
    expect((await admin('key', 'roll', '--id', fresh.id, '--overlap', '8d')).stderr).toBe(
      'error: --overlap must be at most 7d, not "8d"\n',
    );
    // Two keys rolled (once), none made by the refused rolls: 4 keys in all.
    await expect(t.prisma.apiKey.count({ where: { workspaceId: workspace.id } })).resolves.toBe(4);
  });

  it('two rolls of one key at once make one successor', async () => {
    const workspace = await createWorkspace(t.prisma);
    const key = await createApiKey(t.prisma, workspace.id);
    const runs = await Promise.all([
      admin('key', 'roll', '--id', key.id),
      admin('key', 'roll', '--id', key.id),
    ]);
    expect(runs.map((run) => run.status).sort()).toEqual([0, 1]);
    await expect(t.prisma.apiKey.count({ where: { workspaceId: workspace.id } })).resolves.toBe(2);
  });
});

describe('scopes (restricted keys)', () => {
  async function keyWith(scopes: string): Promise<{ workspaceId: string; key: string }> {
    const workspace = await createWorkspace(t.prisma);
    const created = await adminJson<{ key: string; scopes: string[] }>(
      'key',
      'create',
      '--workspace',
      workspace.id,
      '--name',
      'restricted',
      '--scopes',
      scopes,
    );
    expect(created.scopes).toEqual(scopes.split(','));
    return { workspaceId: workspace.id, key: created.key };
  }

  it('serves what a key was given, and answers 403 naming the missing scope for the rest', async () => {
    const { key } = await keyWith('companies:read');
    for (const path of ['/v1/me', '/v1/companies', '/v1/companies/co_none']) {
      expect([path, (await getWithKey(t.app, path, key)).status]).toEqual([
        path,
        path.endsWith('co_none') ? 404 : 200,
      ]);
    }

    for (const [path, missing] of [
      ['/v1/leads', 'leads:read'],
      ['/v1/leads/ld_1', 'leads:read'],
      ['/v1/companies/changes', 'changes:read'],
      ['/v1/leads/changes', 'leads:read, changes:read'],
    ]) {
      const refused = await getWithKey(t.app, path, key);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({
        statusCode: 403,
        error: 'FORBIDDEN',
        message: `This key lacks the scope${missing.includes(',') ? 's' : ''} ${missing}`,
        path,
      });
      expect(refused.headers['www-authenticate']).toBe(
        `Bearer error="insufficient_scope", scope="${missing.replace(', ', ' ')}"`,
      );
      // Refused before the limits: nothing counted, no rate-limit headers.
      expect(refused.headers['x-ratelimit-remaining']).toBeUndefined();
    }
  });

  it('a key given every scope, or none named, reads everything; the feeds need changes:read', async () => {
    const all = await keyWith('companies:read,leads:read,changes:read');
    const workspace = await createWorkspace(t.prisma);
    const unrestricted = await createApiKey(t.prisma, workspace.id);
    for (const key of [all.key, unrestricted.key]) {
      for (const path of [
        '/v1/companies',
        '/v1/leads',
        '/v1/companies/changes',
        '/v1/leads/changes',
      ]) {
        expect([path, (await getWithKey(t.app, path, key)).status]).toEqual([path, 200]);
      }
    }
  });

  it('a rolled key passes its scopes to its successor', async () => {
    const { workspaceId } = await keyWith('leads:read');
    const [original] = await t.prisma.apiKey.findMany({ where: { workspaceId } });
    const rolled = await adminJson<{ successor: { key: string } }>(
      'key',
      'roll',
      '--id',
      original.id,
    );
    expect((await getWithKey(t.app, '/v1/leads', rolled.successor.key)).status).toBe(200);
    expect((await getWithKey(t.app, '/v1/companies', rolled.successor.key)).status).toBe(403);
  });

  it.each(['companies:write', 'companies:read,', 'all', ''])(
    '--scopes %j is refused with one line naming the flag',
    async (value) => {
      const workspace = await createWorkspace(t.prisma);
      const run = await admin(
        'key',
        'create',
        '--workspace',
        workspace.id,
        '--name',
        'x',
        '--scopes',
        value,
      );
      expect(run.stderr).toBe(
        `error: --scopes must be a comma-separated list of companies:read, leads:read, changes:read, visits:read, not ${JSON.stringify(value)}\n`,
      );
      await expect(t.prisma.apiKey.count({ where: { workspaceId: workspace.id } })).resolves.toBe(
        0,
      );
    },
  );
});
