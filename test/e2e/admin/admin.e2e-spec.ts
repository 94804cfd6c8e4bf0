import { adminOn, expectRefusal, runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createTestDatabase } from '../../support/database';
import { createApiKey, createWorkspace } from '../../support/factories';
import { getWithKey, ISO_UTC_MILLIS } from '../../support/http';

// The operator's admin tool (docs/admin.md), run in-process against the test app's
// database: what it prints, what it writes, and what the API then does with the keys it issues.
const admin = runAdminCommand;

describe('admin tool', () => {
  let t: TestApp;
  const { cli, cliJson } = adminOn(() => t);

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  describe('workspace create', () => {
    it('--json prints the new workspace, with a generated id, as stored', async () => {
      const output = await cliJson('workspace', 'create', '--name', 'Globex', '--plan', 'growth');

      expect(output).toStrictEqual({
        id: expect.stringMatching(/^ws_[0-9A-Za-z]{16}$/),
        name: 'Globex',
        plan: 'growth',
        suspended: false,
      });
      const { id } = output as { id: string };
      await expect(t.prisma.workspace.findUnique({ where: { id } })).resolves.toMatchObject({
        name: 'Globex',
        plan: 'growth',
        suspended: false,
      });
    });

    it('takes the id given with --id, and prints one line without --json', async () => {
      const run = await cli(
        'workspace',
        'create',
        '--id',
        'ws_initech',
        '--name',
        'Initech',
        '--plan',
        'starter',
      );

      expect(run).toStrictEqual({
        status: 0,
        stdout: 'Created workspace ws_initech "Initech" (starter).\n',
        stderr: '',
      });
      await expect(
        t.prisma.workspace.findUnique({ where: { id: 'ws_initech' } }),
      ).resolves.toMatchObject({
        name: 'Initech',
        plan: 'starter',
      });
    });

    it('refuses an id that exists, and leaves that workspace as it was', async () => {
      const existing = await createWorkspace(t.prisma, { name: 'Original' });

      const run = await cli(
        'workspace',
        'create',
        '--id',
        existing.id,
        '--name',
        'Impostor',
        '--plan',
        'growth',
      );

      expectRefusal(run, `workspace ${existing.id} already exists`);
      await expect(
        t.prisma.workspace.findUnique({ where: { id: existing.id } }),
      ).resolves.toMatchObject({
        name: 'Original',
      });
    });

    it.each([
      [['--name', 'X', '--plan', 'gold'], /--plan must be growth or starter, not "gold"/],
      [['--name', 'X', '--plan', 'Growth'], /--plan must be growth or starter/],
      [['--plan', 'growth'], /required option '--name <name>' not specified/],
      [['--name', 'X'], /required option '--plan <plan>' not specified/],
      [['--name', '  ', '--plan', 'growth'], /--name must not be empty/],
      [['--name', 'X', '--plan', 'growth', '--id', 'has space'], /--id must be 1 to 64 letters/],
      [['--name', 'X', '--plan', 'growth', '--colour', 'red'], /unknown option '--colour'/],
    ])('refuses %j and writes nothing', async (flags, message) => {
      const before = await t.prisma.workspace.count();

      expectRefusal(await cli('workspace', 'create', ...flags), message);
      expectRefusal(await cli('workspace', 'create', ...flags, '--json'), message);

      await expect(t.prisma.workspace.count()).resolves.toBe(before);
    });
  });

  describe('workspace update', () => {
    it('changes name, plan and suspension, and prints the workspace', async () => {
      const workspace = await createWorkspace(t.prisma, { name: 'Before', plan: 'starter' });

      const output = await cliJson(
        'workspace',
        'update',
        '--id',
        workspace.id,
        '--name',
        'After',
        '--plan',
        'growth',
        '--suspended',
        'true',
      );

      const expected = { id: workspace.id, name: 'After', plan: 'growth', suspended: true };
      expect(output).toStrictEqual(expected);
      await expect(
        t.prisma.workspace.findUnique({
          where: { id: workspace.id },
          select: { id: true, name: true, plan: true, suspended: true },
        }),
      ).resolves.toStrictEqual(expected);
    });

    it('changes only what is given, and prints one line without --json', async () => {
      const workspace = await createWorkspace(t.prisma, { name: 'Kept', suspended: true });

      const run = await cli('workspace', 'update', '--id', workspace.id, '--suspended', 'false');

      expect(run).toStrictEqual({
        status: 0,
        stdout: `Updated workspace ${workspace.id} "Kept" (growth).\n`,
        stderr: '',
      });
      await expect(
        t.prisma.workspace.findUnique({ where: { id: workspace.id } }),
      ).resolves.toMatchObject({
        name: 'Kept',
        plan: 'growth',
        suspended: false,
      });
    });

    it('refuses a workspace that does not exist', async () => {
      expectRefusal(
        await cli('workspace', 'update', '--id', 'ws_missing', '--name', 'X', '--json'),
        'workspace ws_missing does not exist',
      );
      await expect(t.prisma.workspace.count({ where: { id: 'ws_missing' } })).resolves.toBe(0);
    });

    it.each([
      [['--suspended', 'yes'], /--suspended must be true or false, not "yes"/],
      [['--plan', 'enterprise'], /--plan must be growth or starter/],
      [['--name', ''], /--name must not be empty/],
      [[], /nothing to update: give --name, --plan or --suspended/],
    ])('refuses %j and changes nothing', async (flags, message) => {
      const workspace = await createWorkspace(t.prisma, { name: 'Stable' });

      expectRefusal(await cli('workspace', 'update', '--id', workspace.id, ...flags), message);

      await expect(t.prisma.workspace.findUnique({ where: { id: workspace.id } })).resolves.toEqual(
        workspace,
      );
    });

    it('refuses an update without --id', async () => {
      expectRefusal(await cli('workspace', 'update', '--name', 'X'), /required option '--id <id>'/);
    });
  });

  describe('workspace list', () => {
    it('--json prints every workspace as {id, name, plan, suspended}', async () => {
      const listed = await createWorkspace(t.prisma, {
        name: 'Listed',
        plan: 'starter',
        suspended: true,
      });

      const output = (await cliJson('workspace', 'list')) as unknown[];

      expect(output).toHaveLength(await t.prisma.workspace.count());
      expect(output).toContainEqual({
        id: listed.id,
        name: 'Listed',
        plan: 'starter',
        suspended: true,
      });
      for (const workspace of output) {
        expect(Object.keys(workspace as object).sort()).toEqual([
          'id',
          'name',
          'plan',
          'suspended',
        ]);
      }
    });

    it('prints a table without --json', async () => {
      const listed = await createWorkspace(t.prisma, { name: 'Tabled Inc' });

      const run = await cli('workspace', 'list');

      expect(run.status).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+NAME\s+PLAN\s+SUSPENDED$/);
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^${listed.id}\\s+Tabled Inc\\s+growth\\s+no$`)),
      );
      expect(lines).toHaveLength((await t.prisma.workspace.count()) + 1);
    });
  });

  describe('key create', () => {
    it('--json prints the key once, and that key works on GET /v1/me', async () => {
      const workspace = await createWorkspace(t.prisma, { name: 'Keyed' });

      const output = (await cliJson(
        'key',
        'create',
        '--workspace',
        workspace.id,
        '--name',
        'CRM sync',
      )) as Record<string, string>;

      expect(output).toStrictEqual({
        id: expect.any(String),
        name: 'CRM sync',
        workspaceId: workspace.id,
        prefix: output.key.slice(0, 9),
        createdAt: expect.stringMatching(ISO_UTC_MILLIS),
        expiresAt: null,
        scopes: 'all',
        key: expect.stringMatching(/^st_[0-9A-Za-z]{38}$/),
      });
      const me = await getWithKey(t.app, '/v1/me', output.key);
      expect(me.status).toBe(200);
      expect(me.body).toStrictEqual({ id: workspace.id, name: 'Keyed', plan: 'growth' });
      // Stored as a hash only: the value is nowhere in the row.
      const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id: output.id } });
      expect(JSON.stringify(row)).not.toContain(output.key);
      expect(row.createdAt.toISOString()).toBe(output.createdAt);
    });

    it('prints the key in a short text without --json, and that key works', async () => {
      const workspace = await createWorkspace(t.prisma);

      const run = await cli('key', 'create', '--workspace', workspace.id, '--name', 'Zapier');

      expect(run).toMatchObject({ status: 0, stderr: '' });
      const key = /(st_[0-9A-Za-z]+)\s*$/.exec(run.stdout)?.[1] ?? '';
      expect(run.stdout).toContain('Zapier');
      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(200);
    });

    it('refuses a workspace on the starter plan, and writes no key', async () => {
      const workspace = await createWorkspace(t.prisma, { plan: 'starter' });

      for (const json of [[], ['--json']]) {
        expectRefusal(
          await cli('key', 'create', '--workspace', workspace.id, '--name', 'Nope', ...json),
          `workspace ${workspace.id} is on the starter plan, which has no API access`,
        );
      }
      await expect(t.prisma.apiKey.count({ where: { workspaceId: workspace.id } })).resolves.toBe(
        0,
      );
    });

    it('refuses a workspace that does not exist, and writes no key', async () => {
      const before = await t.prisma.apiKey.count();

      expectRefusal(
        await cli('key', 'create', '--workspace', 'ws_ghost', '--name', 'Nope'),
        'workspace ws_ghost does not exist',
      );
      await expect(t.prisma.apiKey.count()).resolves.toBe(before);
    });

    it.each([
      [['--name', 'No workspace'], /required option '--workspace <id>' not specified/],
      [['--workspace', 'ws_x'], /required option '--name <name>' not specified/],
      [['--workspace', 'ws_x', '--name', ''], /--name must not be empty/],
    ])('refuses %j', async (flags, message) => {
      expectRefusal(await cli('key', 'create', ...flags), message);
    });
  });

  describe('key list', () => {
    it('--json prints the keys with their dates, never their value or hash', async () => {
      const workspace = await createWorkspace(t.prisma);
      const created = (await cliJson(
        'key',
        'create',
        '--workspace',
        workspace.id,
        '--name',
        'First',
      )) as {
        id: string;
        key: string;
      };
      const revoked = await createApiKey(t.prisma, workspace.id, {
        name: 'Old',
        revokedAt: new Date('2026-01-01T00:00:00.000Z'),
      });
      const hashes = (await t.prisma.apiKey.findMany({ where: { workspaceId: workspace.id } })).map(
        (key) => key.hash,
      );

      const run = await cli('key', 'list', '--workspace', workspace.id, '--json');

      expect(run).toMatchObject({ status: 0, stderr: '' });
      const output = JSON.parse(run.stdout) as Record<string, unknown>[];
      expect(output).toHaveLength(2);
      expect(output).toContainEqual({
        id: created.id,
        name: 'First',
        prefix: created.key.slice(0, 9),
        createdAt: expect.stringMatching(ISO_UTC_MILLIS),
        lastUsedAt: null,
        revokedAt: null,
        expiresAt: null,
        rolledAt: null,
        scopes: 'all',
      });
      expect(output).toContainEqual(
        expect.objectContaining({
          id: revoked.id,
          name: 'Old',
          revokedAt: '2026-01-01T00:00:00.000Z',
        }),
      );
      for (const key of output) {
        expect(Object.keys(key).sort()).toEqual([
          'createdAt',
          'expiresAt',
          'id',
          'lastUsedAt',
          'name',
          'prefix',
          'revokedAt',
          'rolledAt',
          'scopes',
        ]);
      }
      for (const secret of [created.key, revoked.key, ...hashes])
        expect(run.stdout).not.toContain(secret);
    });

    it('prints a table without --json, never the value or hash', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key, id } = await createApiKey(t.prisma, workspace.id, { name: 'Tabled key' });
      const { hash } = await t.prisma.apiKey.findUniqueOrThrow({ where: { id } });

      const run = await cli('key', 'list', '--workspace', workspace.id);

      expect(run.status).toBe(0);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(
        /^ID\s+NAME\s+PREFIX\s+CREATED\s+LAST USED\s+REVOKED\s+EXPIRES\s+ROLLED\s+SCOPES$/,
      );
      expect(lines[1]).toMatch(new RegExp(`^${id}\\s+Tabled key\\s+${key.slice(0, 9)}\\s`));
      expect(run.stdout).not.toContain(key);
      expect(run.stdout).not.toContain(hash);
    });

    it('refuses a workspace that does not exist', async () => {
      expectRefusal(
        await cli('key', 'list', '--workspace', 'ws_ghost', '--json'),
        'workspace ws_ghost does not exist',
      );
    });
  });

  describe('key revoke', () => {
    it('revokes: the API refuses the key from the next request on', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { id, key } = await createApiKey(t.prisma, workspace.id);
      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(200);

      const output = await cliJson('key', 'revoke', '--id', id);

      expect(output).toStrictEqual({ id, revokedAt: expect.stringMatching(ISO_UTC_MILLIS) });
      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(401);
      const row = await t.prisma.apiKey.findUniqueOrThrow({ where: { id } });
      expect(row.revokedAt?.toISOString()).toBe((output as { revokedAt: string }).revokedAt);
    });

    it('prints one line without --json', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { id, key } = await createApiKey(t.prisma, workspace.id);

      const run = await cli('key', 'revoke', '--id', id);

      expect(run).toMatchObject({ status: 0, stderr: '' });
      expect(run.stdout).toMatch(
        new RegExp(`^Revoked key ${id} at \\d{4}-\\d{2}-\\d{2}T[^ ]+Z\\.\\n$`),
      );
      expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(401);
    });

    it('refuses a key that does not exist', async () => {
      expectRefusal(
        await cli('key', 'revoke', '--id', 'no-such-key', '--json'),
        'key no-such-key does not exist',
      );
    });
  });

  it('suspending a workspace stops its keys; reinstating it lets them in again', async () => {
    const workspace = await createWorkspace(t.prisma);
    const { key } = await createApiKey(t.prisma, workspace.id);

    await cliJson('workspace', 'update', '--id', workspace.id, '--suspended', 'true');
    expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(401);

    await cliJson('workspace', 'update', '--id', workspace.id, '--suspended', 'false');
    expect((await getWithKey(t.app, '/v1/me', key)).status).toBe(200);
  });

  describe('the command line itself', () => {
    it.each([
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['workspace'], /missing command: workspace needs one of create, update, list/],
      [['workspace', 'delete', '--id', 'x'], /unknown command "workspace delete"/],
      [['key', '--verbose'], /unknown option '--verbose' for key/],
      [['key', 'rotate'], /unknown command "key rotate"/],
      [['workspace', 'list', 'extra'], /too many arguments for 'list'/],
      [['workspace', 'list', '--all'], /unknown option '--all'/],
      [['seed'], /required option '--demo' not specified/],
      [['import', '--workspace', 'ws_x'], /required option '--file <path>' not specified/],
    ])('refuses %j with a message naming it', async (argv, message) => {
      const run = await cli(...argv);

      expect(run.status).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
    });

    it('shows the commands, on stderr, when given none', async () => {
      const run = await cli();

      expect(run.status).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/workspace[\s\S]*key[\s\S]*import[\s\S]*seed/);
    });

    it('prints a command’s help on stdout with --help, and succeeds', async () => {
      const run = await cli('workspace', 'create', '--help');

      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/--name <name>[\s\S]*--plan <plan>[\s\S]*--id <id>[\s\S]*--json/);
    });

    it.each([
      [['--help'], /Usage: admin[\s\S]*workspace[\s\S]*key[\s\S]*webhook/],
      [['help'], /Usage: admin /],
      [['help', 'key'], /Usage: admin key /],
      [['key', 'create', '--help'], /--workspace <id>/],
      [['webhook', 'create', '-h'], /Usage: admin webhook create[\s\S]*--events[\s\S]*--pages/],
    ])('prints %j with no valid configuration at all, and succeeds', async (argv, usage) => {
      const none = {
        DATABASE_URL: undefined,
        API_KEY_SECRET: undefined,
        WEBHOOK_SECRET_KEY: undefined,
        PORT: 'not-a-port',
      };
      const run = await admin(none, ...argv);

      expect(run).toMatchObject({ status: 0, stderr: '' });
      expect(run.stdout).toMatch(usage);
    });

    it('still needs the configuration for a command that is not help', async () => {
      const none = { DATABASE_URL: undefined, API_KEY_SECRET: undefined };

      expectRefusal(await admin(none, 'workspace', 'list'), /^error: Invalid configuration: /);
    });

    it.each([
      ['DATABASE_URL', /^error: Invalid configuration: DATABASE_URL is required \(/],
      ['API_KEY_SECRET', /^error: Invalid configuration: API_KEY_SECRET is required \(/],
    ])('stops with one line when %s is missing', async (variable, message) => {
      const env = { DATABASE_URL: t.database.url, [variable]: undefined };

      expectRefusal(await admin(env, 'workspace', 'list', '--json'), message);
    });

    it('says so in one line when the database cannot be reached', async () => {
      const run = await admin(
        { DATABASE_URL: 'postgresql://postgres:postgres@127.0.0.1:1/nowhere' },
        'workspace',
        'list',
        '--json',
      );

      expectRefusal(run, /database of DATABASE_URL is unreachable/);
    });

    it.each([
      [['workspace', 'list']],
      [['workspace', 'create', '--name', 'Acme', '--plan', 'growth']],
      [['key', 'list', '--workspace', 'ws_x']],
      [['import', '--workspace', 'ws_x', '--file', 'docs/examples/import.json']],
      [['seed', '--demo']],
    ])(
      'says to run npm run db:migrate, in one line, on a database without the tables: %j',
      async (argv) => {
        const empty = await createTestDatabase({ migrated: false });
        try {
          const run = await admin({ DATABASE_URL: empty.url }, ...argv, '--json');

          expectRefusal(
            run,
            /^error: the database of DATABASE_URL is not migrated: run `npm run db:migrate` \(after `npm run build`\), then try again\n$/,
          );
        } finally {
          await empty.drop();
        }
      },
    );
  });
});
