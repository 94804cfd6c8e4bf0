import { adminOn, expectRefusal, runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany, createContact, createLead, createWorkspace } from '../../support/factories';
import { createTenant, expectErrorEnvelope, getWithKey } from '../../support/http';
import { until } from '../../support/until';

// The admin tool's commands of the change feeds' operator side (docs/changes.md): `delete`, all or
// nothing, whose deletions the feeds report, and `prune-changes`, after which a cursor from before
// a pruned deletion is answered 410.

type Feed = 'companies' | 'leads';

interface Change {
  op: 'upsert' | 'delete';
  id: string;
  changedAt: string;
}

const EXPIRED = 'cursor has expired: start again without a cursor';
// How long a read of a feed waits for this database's other transactions to end (see readFeed).
const FEED_WAIT_MS = 20_000;

/** Changes as `{op, id}` only, sorted by id (changes of one transaction come in id order). */
function ops(changes: Pick<Change, 'op' | 'id'>[]): Pick<Change, 'op' | 'id'>[] {
  return changes.map(({ op, id }) => ({ op, id })).sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe('admin tool: delete and prune-changes', () => {
  let t: TestApp;
  const { cli, cliJson } = adminOn(() => t);

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  function feedPath(feed: Feed, cursor?: string): string {
    const query = cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`;
    return `/v1/${feed}/changes${query}`;
  }

  /**
   * Follows a feed from `cursor` (the start without one) until `hasMore` is false, and returns
   * every change read and the last `nextCursor`. A transaction still open anywhere on the server
   * (another test file, a benchmark loading data) holds the feed back: an empty page with
   * `hasMore`. Then it waits a little and asks again, as a client does, for up to FEED_WAIT_MS.
   */
  async function readFeed(
    feed: Feed,
    key: string,
    cursor?: string,
  ): Promise<{ changes: Change[]; cursor: string }> {
    const changes: Change[] = [];
    // Page after page while they hold changes; an empty page with `hasMore` waits for the next try.
    const readOn = async () => {
      for (;;) {
        t.clock.advance(1_000); // a fresh rate-limit window every 60 requests
        const response = await getWithKey(t.app, feedPath(feed, cursor), key);
        expect(response.status).toBe(200);
        const page = response.body as { data: Change[]; nextCursor: string; hasMore: boolean };
        changes.push(...page.data);
        cursor = page.nextCursor;
        if (!page.hasMore) return { changes, cursor };
        if (page.data.length === 0) return undefined;
      }
    };
    return until(`the ${feed} feed to be held back no more`, readOn, {
      withinMs: FEED_WAIT_MS,
      everyMs: 100,
    });
  }

  /** The workspace's change rows of one feed: `{id, deleted}`, by id. */
  async function changeRows(
    feed: Feed,
    workspaceId: string,
  ): Promise<{ id: string; deleted: boolean }[]> {
    const table = feed === 'companies' ? 'company_changes' : 'lead_changes';
    return t.prisma.$queryRawUnsafe(
      `SELECT id, deleted FROM ${table} WHERE workspace_id = $1 ORDER BY id`,
      workspaceId,
    );
  }

  /** Moves the change rows of these items `days` days back, as if written then. */
  async function age(feed: Feed, ids: string[], days: number): Promise<void> {
    const table = feed === 'companies' ? 'company_changes' : 'lead_changes';
    const aged = await t.prisma.$executeRawUnsafe(
      `UPDATE ${table} SET changed_at = now() - make_interval(days => $2) WHERE id = ANY($1)`,
      ids,
      days,
    );
    expect(aged).toBe(ids.length);
  }

  describe('delete', () => {
    it('refuses the whole command when any id is not of the workspace, names every one, and deletes nothing', async () => {
      const workspace = await createWorkspace(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      await createContact(t.prisma, company);
      const lead = await createLead(t.prisma, company);
      const other = await createWorkspace(t.prisma);
      const othersCompany = await createCompany(t.prisma, other.id);
      const othersLead = await createLead(t.prisma, othersCompany);
      const counts = () =>
        Promise.all([
          t.prisma.company.count(),
          t.prisma.contact.count(),
          t.prisma.lead.count(),
          t.prisma.$queryRaw`SELECT count(*)::int AS n FROM company_changes WHERE deleted`,
          t.prisma.$queryRaw`SELECT count(*)::int AS n FROM lead_changes WHERE deleted`,
        ]);
      const before = await counts();

      for (const json of [[], ['--json']]) {
        const run = await cli(
          'delete',
          '--workspace',
          workspace.id,
          '--companies',
          `${company.id},co_nowhere,${othersCompany.id}`,
          '--leads',
          `${lead.id},${othersLead.id}`,
          ...json,
        );
        expectRefusal(
          run,
          `delete refused, nothing was deleted: not in workspace ${workspace.id}: ` +
            `companies co_nowhere, ${othersCompany.id}; leads ${othersLead.id}`,
        );
      }
      // Only leads unknown: the valid company is not deleted either.
      expectRefusal(
        await cli(
          'delete',
          '--workspace',
          workspace.id,
          '--companies',
          company.id,
          '--leads',
          'ld_nowhere',
        ),
        `not in workspace ${workspace.id}: leads ld_nowhere`,
      );

      await expect(counts()).resolves.toEqual(before);
      for (const id of [company.id, othersCompany.id]) {
        await expect(t.prisma.company.count({ where: { id } })).resolves.toBe(1);
      }
    });

    it('deletes a company with its contacts and leads, and each appears as a delete in the feeds', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const doomed = await createCompany(t.prisma, workspace.id);
      const contacts = [
        await createContact(t.prisma, doomed),
        await createContact(t.prisma, doomed),
      ];
      const doomedLeads = [await createLead(t.prisma, doomed), await createLead(t.prisma, doomed)];
      const other = await createCompany(t.prisma, workspace.id);
      const listedLead = await createLead(t.prisma, other);
      const keptLead = await createLead(t.prisma, other);
      const companiesBefore = await readFeed('companies', key);
      const leadsBefore = await readFeed('leads', key);

      const output = await cliJson(
        'delete',
        '--workspace',
        workspace.id,
        '--companies',
        doomed.id,
        '--leads',
        listedLead.id,
      );

      expect(output).toStrictEqual({
        workspaceId: workspace.id,
        companies: 1,
        contacts: 2,
        leads: { listed: 1, ofDeletedCompanies: 2, total: 3 },
        visits: { listed: 0, ofDeletedCompanies: 0, total: 0 },
      });
      await expect(
        t.prisma.company.findMany({ where: { workspaceId: workspace.id } }),
      ).resolves.toEqual([expect.objectContaining({ id: other.id })]);
      await expect(
        t.prisma.contact.count({ where: { id: { in: contacts.map((c) => c.id) } } }),
      ).resolves.toBe(0);
      await expect(
        t.prisma.lead.findMany({ where: { workspaceId: workspace.id } }),
      ).resolves.toEqual([expect.objectContaining({ id: keptLead.id })]);

      const companyChanges = await readFeed('companies', key, companiesBefore.cursor);
      expect(companyChanges.changes).toStrictEqual([
        { op: 'delete', id: doomed.id, changedAt: expect.any(String) },
      ]);
      const leadChanges = await readFeed('leads', key, leadsBefore.cursor);
      expect(ops(leadChanges.changes)).toEqual(
        ops([...doomedLeads, listedLead].map((lead) => ({ op: 'delete', id: lead.id }))),
      );
      for (const change of leadChanges.changes) {
        expect(change).toStrictEqual({
          op: 'delete',
          id: change.id,
          changedAt: expect.any(String),
        });
      }
    });

    it('prints one line without --json', async () => {
      const workspace = await createWorkspace(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      await createContact(t.prisma, company);
      await createLead(t.prisma, company);
      const lead = await createLead(t.prisma, await createCompany(t.prisma, workspace.id));

      const run = await cli(
        'delete',
        '--workspace',
        workspace.id,
        '--companies',
        company.id,
        '--leads',
        lead.id,
      );

      expect(run).toStrictEqual({
        status: 0,
        stdout:
          `Deleted 1 company (with 1 contact, 1 lead and 0 visits) and 1 listed lead from ` +
          `workspace ${workspace.id}: 2 leads and 0 visits in all.\n`,
        stderr: '',
      });
    });

    it('takes leads alone, and a company alone', async () => {
      const workspace = await createWorkspace(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      const lead = await createLead(t.prisma, company);

      await expect(
        cliJson('delete', '--workspace', workspace.id, '--leads', lead.id),
      ).resolves.toStrictEqual({
        workspaceId: workspace.id,
        companies: 0,
        contacts: 0,
        leads: { listed: 1, ofDeletedCompanies: 0, total: 1 },
        visits: { listed: 0, ofDeletedCompanies: 0, total: 0 },
      });
      await expect(
        cliJson(
          'delete',
          '--workspace',
          workspace.id,
          '--companies',
          `${company.id},${company.id}`,
        ),
      ).resolves.toStrictEqual({
        workspaceId: workspace.id,
        companies: 1,
        contacts: 0,
        leads: { listed: 0, ofDeletedCompanies: 0, total: 0 },
        visits: { listed: 0, ofDeletedCompanies: 0, total: 0 },
      });
      await expect(t.prisma.company.count({ where: { workspaceId: workspace.id } })).resolves.toBe(
        0,
      );
    });

    it.each([
      [
        ['--workspace', 'ws_x'],
        /nothing to delete: give --companies, --leads, --visits or several/,
      ],
      [['--companies', 'co_1'], /required option '--workspace <id>' not specified/],
      [
        ['--workspace', 'ws_x', '--companies', 'co_1,,co_2'],
        /--companies must be a comma-separated list of ids without empty entries/,
      ],
      [['--workspace', 'ws_x', '--leads', ''], /--leads must be a comma-separated list/],
      [['--workspace', 'ws_missing', '--leads', 'ld_1'], /workspace ws_missing does not exist/],
    ])('refuses %j', async (flags, message) => {
      expectRefusal(await cli('delete', ...flags), message);
      expectRefusal(await cli('delete', ...flags, '--json'), message);
    });
  });

  describe('prune-changes', () => {
    describe('after an old deletion is pruned', () => {
      // One workspace: `old` (with a lead) deleted 31 days ago, `recent` (with a lead) deleted
      // now, `kept` (with a lead) last changed 31 days ago; cursors read before and after the
      // old deletion; then prune-changes with the default retention (30 days).
      let key: string;
      let workspaceId: string;
      const ids = {
        companies: { old: '', recent: '', kept: '' },
        leads: { old: '', recent: '', kept: '' },
      };
      const cursors = { before: { companies: '', leads: '' }, after: { companies: '', leads: '' } };
      let output: unknown;

      beforeAll(async () => {
        const tenant = await createTenant(t.prisma);
        key = tenant.key;
        workspaceId = tenant.workspace.id;
        for (const name of ['old', 'recent', 'kept'] as const) {
          const company = await createCompany(t.prisma, workspaceId);
          ids.companies[name] = company.id;
          ids.leads[name] = (await createLead(t.prisma, company)).id;
        }
        for (const feed of ['companies', 'leads'] as const) {
          cursors.before[feed] = (await readFeed(feed, key)).cursor;
        }
        await cliJson('delete', '--workspace', workspaceId, '--companies', ids.companies.old);
        for (const feed of ['companies', 'leads'] as const) {
          // The old deletion, and an old upsert, which is never pruned.
          await age(feed, [ids[feed].old, ids[feed].kept], 31);
          const after = await readFeed(feed, key, cursors.before[feed]);
          expect(ops(after.changes)).toEqual([{ op: 'delete', id: ids[feed].old }]);
          cursors.after[feed] = after.cursor;
        }
        await cliJson('delete', '--workspace', workspaceId, '--companies', ids.companies.recent);

        output = await cliJson('prune-changes');
      });

      it('prints the deletion records pruned per feed', () => {
        expect(output).toStrictEqual({
          olderThanDays: 30,
          before: expect.any(String),
          pruned: { companies: 1, leads: 1, visits: 0 },
          deletedWorkspaces: { companies: 0, leads: 0, visits: 0, horizons: 0 },
        });
        const before = Date.parse((output as { before: string }).before);
        expect(Math.abs(before - (Date.now() - 30 * 86_400_000))).toBeLessThan(60_000);
      });

      it('removes only the old deletion records: old upserts and recent deletions stay', async () => {
        for (const feed of ['companies', 'leads'] as const) {
          // In id order, that is in order of creation.
          await expect(changeRows(feed, workspaceId)).resolves.toEqual([
            { id: ids[feed].recent, deleted: true },
            { id: ids[feed].kept, deleted: false },
          ]);
        }
      });

      it.each(['companies', 'leads'] as const)(
        'answers 410 GONE on the %s feed to a cursor read before the pruned deletion',
        async (feed) => {
          const path = feedPath(feed, cursors.before[feed]);
          const expired = await getWithKey(t.app, path, key);
          expectErrorEnvelope(expired, { status: 410, error: 'GONE', path, message: EXPIRED });
        },
      );

      it.each(['companies', 'leads'] as const)(
        'serves the %s feed to a cursor read after the pruned deletion',
        async (feed) => {
          const after = await readFeed(feed, key, cursors.after[feed]);
          expect(ops(after.changes)).toEqual([{ op: 'delete', id: ids[feed].recent }]);
        },
      );

      it.each(['companies', 'leads'] as const)(
        'serves the %s feed without a cursor, from the start',
        async (feed) => {
          const fromStart = await readFeed(feed, key);
          expect(ops(fromStart.changes)).toEqual(
            ops([
              { op: 'upsert', id: ids[feed].kept },
              { op: 'delete', id: ids[feed].recent },
            ]),
          );
        },
      );
    });

    it('raises a lower horizon to the greatest position pruned, and keeps a greater one', async () => {
      const lower = await createWorkspace(t.prisma);
      const greater = await createWorkspace(t.prisma);
      const first = await createCompany(t.prisma, lower.id);
      const second = await createCompany(t.prisma, lower.id);
      const greaterCompany = await createCompany(t.prisma, greater.id);
      // Two deletions in two transactions, the later one of the smaller id: the position is the
      // transaction first, the id only within it.
      await cliJson('delete', '--workspace', lower.id, '--companies', second.id);
      await cliJson('delete', '--workspace', lower.id, '--companies', first.id);
      await cliJson('delete', '--workspace', greater.id, '--companies', greaterCompany.id);
      await age('companies', [first.id, second.id, greaterCompany.id], 40);
      const txids = new Map(
        (
          await t.prisma.$queryRaw<{ id: string; txid: string }[]>`
            SELECT id, txid::text FROM company_changes
            WHERE id IN (${first.id}, ${second.id}, ${greaterCompany.id})`
        ).map((row) => [row.id, row.txid]),
      );
      expect(BigInt(txids.get(first.id) ?? 0)).toBeGreaterThan(BigInt(txids.get(second.id) ?? 0));
      // Same transaction, greater id: a greater position than the record pruned below.
      await t.prisma.$executeRaw`
        INSERT INTO change_horizons (workspace_id, feed, pruned_txid, pruned_id) VALUES
          (${lower.id}, 'companies', '1'::xid8, 'a'),
          (${greater.id}, 'companies', ${txids.get(greaterCompany.id)}::xid8,
            ${`${greaterCompany.id}~`})`;

      await expect(cliJson('prune-changes')).resolves.toMatchObject({
        pruned: { companies: 3, leads: 0 },
      });

      await expect(
        t.prisma.$queryRaw`
          SELECT workspace_id AS "workspaceId", pruned_txid::text AS txid, pruned_id AS id
          FROM change_horizons WHERE workspace_id IN (${lower.id}, ${greater.id})
          ORDER BY workspace_id`,
      ).resolves.toEqual([
        { workspaceId: lower.id, txid: txids.get(first.id), id: first.id },
        {
          workspaceId: greater.id,
          txid: txids.get(greaterCompany.id),
          id: `${greaterCompany.id}~`,
        },
      ]);
    });

    it('removes the change rows and horizons of workspaces that no longer exist', async () => {
      const gone = await createWorkspace(t.prisma);
      const company = await createCompany(t.prisma, gone.id);
      await createLead(t.prisma, company);
      await createCompany(t.prisma, gone.id);
      const stays = await createWorkspace(t.prisma);
      await createLead(t.prisma, await createCompany(t.prisma, stays.id));
      await t.prisma.$executeRaw`
        INSERT INTO change_horizons (workspace_id, feed, pruned_txid, pruned_id) VALUES
          (${gone.id}, 'companies', '1'::xid8, 'a'), (${gone.id}, 'leads', '1'::xid8, 'a'),
          (${stays.id}, 'leads', '1'::xid8, 'a')`;
      await t.prisma.workspace.delete({ where: { id: gone.id } });
      await expect(changeRows('companies', gone.id)).resolves.toHaveLength(2);

      const output = await cliJson('prune-changes', '--older-than-days', '1');

      expect(output).toMatchObject({
        olderThanDays: 1,
        deletedWorkspaces: { companies: 2, leads: 1, visits: 0, horizons: 2 },
      });
      await expect(changeRows('companies', gone.id)).resolves.toEqual([]);
      await expect(changeRows('leads', gone.id)).resolves.toEqual([]);
      await expect(changeRows('companies', stays.id)).resolves.toHaveLength(1);
      await expect(changeRows('leads', stays.id)).resolves.toHaveLength(1);
      await expect(
        t.prisma.$queryRaw`SELECT workspace_id AS id FROM change_horizons
          WHERE workspace_id IN (${gone.id}, ${stays.id})`,
      ).resolves.toEqual([{ id: stays.id }]);
    });

    it('takes the retention from CHANGES_RETENTION_DAYS, and --older-than-days over it', async () => {
      const workspace = await createWorkspace(t.prisma);
      const tenDays = await createCompany(t.prisma, workspace.id);
      const twentyDays = await createCompany(t.prisma, workspace.id);
      await cliJson(
        'delete',
        '--workspace',
        workspace.id,
        '--companies',
        `${tenDays.id},${twentyDays.id}`,
      );
      await age('companies', [tenDays.id], 10);
      await age('companies', [twentyDays.id], 20);
      const remaining = async () =>
        (await changeRows('companies', workspace.id)).map((row) => row.id);
      const prune = (env: Record<string, string>, ...argv: string[]) =>
        runAdminCommand({ DATABASE_URL: t.database.url, ...env }, 'prune-changes', ...argv);

      expect(await prune({})).toMatchObject({ status: 0 }); // 30 days
      await expect(remaining()).resolves.toEqual([tenDays.id, twentyDays.id]);

      const fifteen = await prune({ CHANGES_RETENTION_DAYS: '15' }, '--json');
      expect(JSON.parse(fifteen.stdout)).toMatchObject({ olderThanDays: 15 });
      await expect(remaining()).resolves.toEqual([tenDays.id]);

      const text = await prune({ CHANGES_RETENTION_DAYS: '15' }, '--older-than-days', '5');
      expect(text).toMatchObject({ status: 0, stderr: '' });
      expect(text.stdout).toMatch(
        /^Pruned 1 company, 0 lead and 0 visit deletion records older than 5 days \(before \d{4}-\d\d-\d\dT[\d:.]+Z\); removed 0 company, 0 lead and 0 visit change records and 0 horizons of deleted workspaces\.\n$/,
      );
      await expect(remaining()).resolves.toEqual([]);
    });

    it.each([
      [['--older-than-days', '0'], /--older-than-days must be a whole number of days from 1/],
      [['--older-than-days', '1.5'], /--older-than-days must be a whole number of days/],
      [['--older-than-days', 'week'], /--older-than-days must be a whole number of days/],
      [['--older-than-days'], /option '--older-than-days <n>' argument missing/],
      [['--all'], /unknown option '--all'/],
    ])('refuses %j', async (flags, message) => {
      expectRefusal(await cli('prune-changes', ...flags), message);
    });
  });
});
