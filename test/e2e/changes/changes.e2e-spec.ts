import { Client } from 'pg';
import request from 'supertest';
import { Database } from '../../../src/database/database';
import type { Workspace } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import { lockWaiterCount, waitForLockWaiter } from '../../support/database';
import { createCompany, createContact, createLead } from '../../support/factories';
import {
  createTenant,
  expectErrorEnvelope,
  expectValidationError,
  getWithKey,
} from '../../support/http';
import { until } from '../../support/until';

// GET /v1/{companies,leads}/changes and GET /v1/{companies,leads}/{id}: each guarantee of the
// change feeds with its own case (the generated histories are in changes-property.e2e-spec.ts).
// Writes go through a plain SQL session wherever the point is that any writer is tracked.

interface Change {
  op: 'upsert' | 'delete';
  id: string;
  changedAt: string;
  company?: { id: string; name: string; contacts: { id: string }[] };
  lead?: { id: string; companyId: string; companyName: string };
}

interface FeedPage {
  data: Change[];
  nextCursor: string;
  hasMore: boolean;
}

type FeedName = 'companies' | 'leads';

describe('change feeds', () => {
  let t: TestApp;
  let sql: Client;

  beforeAll(async () => {
    t = await createTestApp();
    sql = new Client({ connectionString: t.database.url });
    await sql.connect();
  });

  afterAll(async () => {
    await sql.end();
    await t.close();
  });

  async function page(key: string, feed: FeedName, query = ''): Promise<FeedPage> {
    const response = await getWithKey(t.app, `/v1/${feed}/changes${query}`, key);
    expect(response.status).toBe(200);
    return response.body as FeedPage;
  }

  /**
   * Follows the feed until `hasMore` is false. An empty page with `hasMore` means changes held
   * back by a transaction still open somewhere on the server (other test files run in parallel):
   * wait a little and ask again, as a client does.
   */
  async function drain(
    key: string,
    feed: FeedName,
    cursor?: string,
    limit = 2,
  ): Promise<{ changes: Change[]; cursor: string }> {
    const changes: Change[] = [];
    // Page after page while they hold changes; an empty page with `hasMore` waits for the next try.
    const readOn = async () => {
      for (;;) {
        const query = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const body = await page(key, feed, query);
        changes.push(...body.data);
        cursor = body.nextCursor;
        if (!body.hasMore) return { changes, cursor };
        if (body.data.length === 0) return undefined;
      }
    };
    return until('the feed to catch up', readOn, { everyMs: 20 });
  }

  const ops = (changes: Change[]) => changes.map(({ op, id }) => `${op} ${id}`);

  async function tenantWithCompany(): Promise<{ workspace: Workspace; key: string; id: string }> {
    const { workspace, key } = await createTenant(t.prisma);
    const company = await createCompany(t.prisma, workspace.id);
    return { workspace, key, id: company.id };
  }

  describe('the first pass', () => {
    it('gives every live item once, as an upsert equal to what the list and the single read give', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const companies = [];
      for (let i = 0; i < 5; i++) {
        const company = await createCompany(t.prisma, workspace.id, { intentScore: 10 * i });
        await createContact(t.prisma, company);
        await createLead(t.prisma, company);
        companies.push(company);
      }
      const { changes } = await drain(key, 'companies');
      expect(changes.map(({ op }) => op)).toEqual(Array(5).fill('upsert'));
      expect(new Set(changes.map(({ id }) => id))).toEqual(new Set(companies.map(({ id }) => id)));

      const listed = (await getWithKey(t.app, '/v1/companies?limit=200', key)).body as {
        data: unknown[];
      };
      expect(changes.map(({ company }) => company)).toEqual(
        expect.arrayContaining(listed.data as object[]),
      );
      for (const change of changes) {
        expect(change.changedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        const single = await getWithKey(t.app, `/v1/companies/${change.id}`, key);
        expect(single.status).toBe(200);
        expect(single.body).toEqual(change.company);
      }

      const leads = await drain(key, 'leads');
      const listedLeads = (await getWithKey(t.app, '/v1/leads?limit=200', key)).body as {
        data: object[];
      };
      expect(leads.changes.map(({ lead }) => lead)).toEqual(
        expect.arrayContaining(listedLeads.data),
      );
      expect(leads.changes).toHaveLength(5);
    });

    it('is an empty page with a cursor for a workspace with nothing, which later changes follow', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const empty = await page(key, 'companies');
      expect(empty).toEqual({ data: [], nextCursor: expect.any(String), hasMore: false });
      const company = await createCompany(t.prisma, workspace.id);
      const { changes } = await drain(key, 'companies', empty.nextCursor);
      expect(ops(changes)).toEqual([`upsert ${company.id}`]);
    });

    it('never shows another workspace’s items', async () => {
      const mine = await tenantWithCompany();
      await tenantWithCompany();
      const { changes } = await drain(mine.key, 'companies', undefined, 1000);
      expect(ops(changes)).toEqual([`upsert ${mine.id}`]);
    });
  });

  describe('what moves an item', () => {
    it('an update of a field, once, at its latest change, with its current state', async () => {
      const { key, id } = await tenantWithCompany();
      const { cursor } = await drain(key, 'companies');
      for (const score of [61, 62, 63]) {
        await sql.query('UPDATE companies SET intent_score = $2 WHERE id = $1', [id, score]);
      }
      const { changes } = await drain(key, 'companies', cursor);
      expect(ops(changes)).toEqual([`upsert ${id}`]);
      expect(changes[0].company).toMatchObject({ id, intentScore: 63 });
    });

    it('not an update that changes no field', async () => {
      const { key, id } = await tenantWithCompany();
      const { cursor } = await drain(key, 'companies');
      await sql.query(
        'UPDATE companies SET name = name, intent_score = intent_score WHERE id = $1',
        [id],
      );
      await sql.query('UPDATE contacts SET name = name WHERE company_id = $1', [id]);
      expect((await drain(key, 'companies', cursor)).changes).toEqual([]);
    });

    it('a change of a contact moves its company; a contact moving moves both companies', async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const other = await createCompany(t.prisma, workspace.id);
      const { cursor } = await drain(key, 'companies');

      const contact = await createContact(t.prisma, { id, workspaceId: workspace.id });
      const afterInsert = await drain(key, 'companies', cursor);
      expect(ops(afterInsert.changes)).toEqual([`upsert ${id}`]);
      expect(afterInsert.changes[0].company?.contacts.map((c) => c.id)).toEqual([contact.id]);

      await sql.query("UPDATE contacts SET job_title = 'CEO' WHERE id = $1", [contact.id]);
      const afterUpdate = await drain(key, 'companies', afterInsert.cursor);
      expect(ops(afterUpdate.changes)).toEqual([`upsert ${id}`]);

      await sql.query('UPDATE contacts SET company_id = $2 WHERE id = $1', [contact.id, other.id]);
      const afterMove = await drain(key, 'companies', afterUpdate.cursor);
      expect(ops(afterMove.changes).sort()).toEqual([`upsert ${id}`, `upsert ${other.id}`].sort());

      await sql.query('DELETE FROM contacts WHERE id = $1', [contact.id]);
      const afterDelete = await drain(key, 'companies', afterMove.cursor);
      expect(ops(afterDelete.changes)).toEqual([`upsert ${other.id}`]);
      expect(afterDelete.changes[0].company?.contacts).toEqual([]);
    });

    it("a change of a company's name moves its leads; another field of the company does not", async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const lead = await createLead(t.prisma, { id, workspaceId: workspace.id });
      const { cursor } = await drain(key, 'leads');

      await sql.query('UPDATE companies SET intent_score = 99 WHERE id = $1', [id]);
      expect((await drain(key, 'leads', cursor)).changes).toEqual([]);

      await sql.query("UPDATE companies SET name = 'Renamed' WHERE id = $1", [id]);
      const { changes } = await drain(key, 'leads', cursor);
      expect(ops(changes)).toEqual([`upsert ${lead.id}`]);
      expect(changes[0].lead?.companyName).toBe('Renamed');
    });
  });

  describe('deletions', () => {
    it('deleting a company deletes it in the companies feed and each of its leads in the leads feed', async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const company = { id, workspaceId: workspace.id };
      await createContact(t.prisma, company);
      const leads = [await createLead(t.prisma, company), await createLead(t.prisma, company)];
      const companiesBefore = await drain(key, 'companies');
      const leadsBefore = await drain(key, 'leads');

      await sql.query('DELETE FROM companies WHERE id = $1', [id]);
      const companies = await drain(key, 'companies', companiesBefore.cursor);
      expect(companies.changes).toEqual([
        { op: 'delete', id, changedAt: expect.any(String) as string },
      ]);
      const leadChanges = await drain(key, 'leads', leadsBefore.cursor);
      expect(ops(leadChanges.changes).sort()).toEqual(leads.map((l) => `delete ${l.id}`).sort());
      expect(await getWithKey(t.app, `/v1/companies/${id}`, key)).toHaveProperty('status', 404);
    });

    it('an id deleted and created again is an upsert after its delete', async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const { cursor } = await drain(key, 'companies');
      await sql.query('DELETE FROM companies WHERE id = $1', [id]);
      const deleted = await drain(key, 'companies', cursor);
      expect(ops(deleted.changes)).toEqual([`delete ${id}`]);

      await createCompany(t.prisma, workspace.id, { id, name: 'Back again' });
      const recreated = await drain(key, 'companies', deleted.cursor);
      expect(ops(recreated.changes)).toEqual([`upsert ${id}`]);
      expect(recreated.changes[0].company?.name).toBe('Back again');
      // A client that had not read the delete yet gets only the latest state.
      expect(ops((await drain(key, 'companies', cursor)).changes)).toEqual([`upsert ${id}`]);
    });

    it('TRUNCATE, which fires no row trigger, deletes every item too', async () => {
      // In a database of its own: TRUNCATE empties the table for every workspace.
      const own = await createTestApp();
      try {
        const { workspace, key } = await createTenant(own.prisma);
        const company = await createCompany(own.prisma, workspace.id);
        const lead = await createLead(own.prisma, company);
        const before = await getWithKey(own.app, '/v1/companies/changes', key);
        const leadsBefore = await getWithKey(own.app, '/v1/leads/changes', key);
        await own.prisma.$executeRawUnsafe('TRUNCATE companies, contacts, leads, visits');
        const after = await getWithKey(
          own.app,
          `/v1/companies/changes?cursor=${encodeURIComponent(before.body.nextCursor as string)}`,
          key,
        );
        expect(ops(after.body.data as Change[])).toEqual([`delete ${company.id}`]);
        const leadsAfter = await getWithKey(
          own.app,
          `/v1/leads/changes?cursor=${encodeURIComponent(leadsBefore.body.nextCursor as string)}`,
          key,
        );
        expect(ops(leadsAfter.body.data as Change[])).toEqual([`delete ${lead.id}`]);
      } finally {
        await own.close();
      }
    });
  });

  describe('concurrent writers', () => {
    it('holds back a change committed after an older transaction that is still open, then gives both', async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const later = await createCompany(t.prisma, workspace.id);
      const { cursor } = await drain(key, 'companies');

      const open = new Client({ connectionString: t.database.url });
      await open.connect();
      try {
        await open.query('BEGIN');
        await open.query("UPDATE companies SET name = 'Slow writer' WHERE id = $1", [id]);
        // Starts after the open transaction and commits first.
        await sql.query("UPDATE companies SET name = 'Fast writer' WHERE id = $1", [later.id]);

        const held = await page(key, 'companies', `?cursor=${encodeURIComponent(cursor)}`);
        expect(held).toEqual({ data: [], nextCursor: cursor, hasMore: true });

        await open.query('COMMIT');
      } finally {
        await open.end();
      }
      const { changes } = await drain(key, 'companies', cursor);
      // Commit order was the reverse: the feed's order is the writers' start, and nothing is lost.
      expect(ops(changes)).toEqual([`upsert ${id}`, `upsert ${later.id}`]);
      expect(changes.map(({ company }) => company?.name)).toEqual(['Slow writer', 'Fast writer']);
    });

    it('a lead deleted while its company is renamed is a deletion, even when the rename records it live last', async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const lead = await createLead(t.prisma, { id, workspaceId: workspace.id });
      const { cursor } = await drain(key, 'leads');

      // The race, made certain: a third session holds the lead's change row; the deletion, then
      // the rename (which reads the lead, its deletion not yet committed) queue behind it, so the
      // deletion records first and the rename, granted the row after it, records the lead live.
      const [locker, deleter, renamer] = [1, 2, 3].map(
        () => new Client({ connectionString: t.database.url }),
      );
      await Promise.all([locker, deleter, renamer].map((client) => client.connect()));
      try {
        await locker.query('BEGIN');
        await locker.query(
          'SELECT FROM lead_changes WHERE workspace_id = $1 AND id = $2 FOR UPDATE',
          [workspace.id, lead.id],
        );
        const deleting = deleter.query('DELETE FROM leads WHERE id = $1', [lead.id]);
        await waitForLockWaiter(sql);
        const renaming = renamer.query("UPDATE companies SET name = 'Renamed' WHERE id = $1", [id]);
        await waitForLockWaiter(sql, 2);
        await locker.query('COMMIT');
        await Promise.all([deleting, renaming]);
      } finally {
        await Promise.all([locker, deleter, renamer].map((client) => client.end()));
      }
      const { rows } = await sql.query<{ deleted: boolean }>(
        'SELECT deleted FROM lead_changes WHERE workspace_id = $1 AND id = $2',
        [workspace.id, lead.id],
      );
      expect(rows).toEqual([{ deleted: false }]);

      const { changes } = await drain(key, 'leads', cursor);
      expect(changes).toEqual([{ op: 'delete', id: lead.id, changedAt: expect.any(String) }]);
      expect((await getWithKey(t.app, `/v1/leads/${lead.id}`, key)).status).toBe(404);
    });

    it.each(['inserted', 'moved'] as const)(
      'a lead %s while its company is renamed comes again with the new name',
      async (how) => {
        const { workspace, key, id } = await tenantWithCompany();
        const other = await createCompany(t.prisma, workspace.id);
        const template = await createLead(t.prisma, other);
        const leadId = how === 'moved' ? template.id : `${template.id}_new`;
        const { name } = await t.prisma.company.findUniqueOrThrow({ where: { id } });
        const { cursor } = await drain(key, 'leads');

        // The lead's writer commits after the rename has run its statement and before the rename
        // commits: a reader between the two commits reads the lead with the old name.
        const [writer, renamer] = [1, 2].map(
          () => new Client({ connectionString: t.database.url }),
        );
        await Promise.all([writer, renamer].map((client) => client.connect()));
        try {
          await writer.query('BEGIN');
          if (how === 'moved') {
            await writer.query('UPDATE leads SET company_id = $1 WHERE id = $2', [id, leadId]);
          } else {
            await writer.query(
              `INSERT INTO leads (id, workspace_id, company_id, contact_name, contact_title,
                 contact_email, intent_score, intent_level, signal, recommended_action, status,
                 assigned_to_id, created_at)
               SELECT $1, workspace_id, $2, contact_name, contact_title, contact_email,
                 intent_score, intent_level, signal, recommended_action, status, assigned_to_id,
                 created_at
               FROM leads WHERE id = $3`,
              [leadId, id, template.id],
            );
          }
          await renamer.query('BEGIN');
          let ran = false;
          const renaming = renamer
            .query("UPDATE companies SET name = 'Renamed' WHERE id = $1", [id])
            .then(() => (ran = true));
          // The rename has either run its statement or waits for the writer (as it must).
          await until(
            'the rename to run or wait',
            async () => ran || (await lockWaiterCount(sql)) > 0,
          );
          await writer.query('COMMIT');
          await renaming;

          const between = await until('the lead to be given', async () => {
            const body = await page(key, 'leads', `?cursor=${encodeURIComponent(cursor)}`);
            return body.data.length > 0 ? body : undefined;
          });
          expect(between.data).toEqual([
            expect.objectContaining({
              op: 'upsert',
              id: leadId,
              lead: expect.objectContaining({ companyName: name }),
            }),
          ]);
          await renamer.query('COMMIT');

          const { changes } = await drain(key, 'leads', between.nextCursor);
          expect(changes).toEqual([
            expect.objectContaining({
              op: 'upsert',
              id: leadId,
              lead: expect.objectContaining({ companyId: id, companyName: 'Renamed' }),
            }),
          ]);
        } finally {
          await Promise.all([writer, renamer].map((client) => client.end()));
        }
      },
    );

    it('gives the same changes for the same cursor, and applying a page twice changes nothing', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      for (let i = 0; i < 4; i++) await createCompany(t.prisma, workspace.id);
      const first = await page(key, 'companies', '?limit=3');
      const again = await page(key, 'companies', '?limit=3');
      // The same changes. (The cursors may differ in the pass's start, which any transaction on
      // the server moves; both name the same position.)
      expect({ ...again, nextCursor: '' }).toEqual({ ...first, nextCursor: '' });
      const next = await page(key, 'companies', `?cursor=${encodeURIComponent(first.nextCursor)}`);
      const nextAgain = await page(
        key,
        'companies',
        `?cursor=${encodeURIComponent(again.nextCursor)}`,
      );
      expect(next.data).toHaveLength(1);
      expect(nextAgain.data).toEqual(next.data);
      expect(next.hasMore).toBe(false);
      expect(first.hasMore).toBe(true);
    });
  });

  describe('refusals', () => {
    it('400 for a cursor that is malformed, tampered with, or from the other feed or workspace', async () => {
      const mine = await tenantWithCompany();
      const theirs = await tenantWithCompany();
      const cursor = (await page(mine.key, 'companies')).nextCursor;
      const [payload, mac] = cursor.split('.');
      const flipped = (text: string) => text.slice(0, -1) + (text.endsWith('A') ? 'B' : 'A');
      const forged = Buffer.from('99999999:zzz').toString('base64url');
      const refused = [
        `/v1/companies/changes?cursor=${encodeURIComponent(flipped(cursor))}`,
        `/v1/companies/changes?cursor=${flipped(payload)}.${mac}`,
        `/v1/companies/changes?cursor=${forged}.${mac}`,
        '/v1/companies/changes?cursor=not-a-cursor',
        '/v1/companies/changes?cursor=',
        `/v1/companies/changes?cursor=${'a'.repeat(5000)}.${mac}`,
      ];
      for (const path of refused) {
        expect(expectValidationError(await getWithKey(t.app, path, mine.key), path)).toEqual([
          'cursor is not valid',
        ]);
      }
      const otherFeed = `/v1/leads/changes?cursor=${encodeURIComponent(cursor)}`;
      expect(
        expectValidationError(await getWithKey(t.app, otherFeed, mine.key), otherFeed),
      ).toEqual(['cursor is not valid']);
      const otherWorkspace = `/v1/companies/changes?cursor=${encodeURIComponent(cursor)}`;
      expect(
        expectValidationError(await getWithKey(t.app, otherWorkspace, theirs.key), otherWorkspace),
      ).toEqual(['cursor is not valid']);
    });

    it('400 for the limit out of bounds, a parameter given twice or unknown', async () => {
      const { key } = await tenantWithCompany();
      const cases: [string, string][] = [
        ['?limit=0', 'limit must not be less than 1'],
        ['?limit=1001', 'limit must not be greater than 1000'],
        ['?limit=1e2', 'limit must be an integer'],
        ['?cursor=a&cursor=b', 'cursor must be given only once'],
        ['?offset=0', 'property offset should not exist'],
      ];
      for (const [query, message] of cases) {
        const path = `/v1/companies/changes${query}`;
        expect(expectValidationError(await getWithKey(t.app, path, key), path)).toEqual([message]);
      }
      expect((await page(key, 'companies', '?limit=1000')).data).toHaveLength(1);
    });

    it('410 for a cursor before pruned deletions; a fresh start still works', async () => {
      const { workspace, key } = await tenantWithCompany();
      const cursor = (await page(key, 'companies')).nextCursor;
      await sql.query(
        `INSERT INTO change_horizons (workspace_id, feed, pruned_txid, pruned_id)
         VALUES ($1, 'companies', pg_current_xact_id(), 'co_')`,
        [workspace.id],
      );
      const path = `/v1/companies/changes?cursor=${encodeURIComponent(cursor)}`;
      expectErrorEnvelope(await getWithKey(t.app, path, key), {
        status: 410,
        error: 'GONE',
        path,
        message: 'cursor has expired: start again without a cursor',
      });
      // The leads feed of the workspace was not pruned.
      const leadsCursor = (await page(key, 'leads')).nextCursor;
      await page(key, 'leads', `?cursor=${encodeURIComponent(leadsCursor)}`);
      const restart = await drain(key, 'companies');
      await page(key, 'companies', `?cursor=${encodeURIComponent(restart.cursor)}`);
    });
  });

  describe('GET /v1/{companies,leads}/{id}', () => {
    it('404, the same envelope, for an id of another workspace and an id that does not exist', async () => {
      const mine = await tenantWithCompany();
      const theirs = await tenantWithCompany();
      const theirLead = await createLead(t.prisma, {
        id: theirs.id,
        workspaceId: theirs.workspace.id,
      });
      for (const path of [
        `/v1/companies/${theirs.id}`,
        '/v1/companies/co_does_not_exist',
        `/v1/leads/${theirLead.id}`,
        '/v1/leads/ld_does_not_exist',
      ]) {
        expectErrorEnvelope(await getWithKey(t.app, path, mine.key), {
          status: 404,
          error: 'NOT_FOUND',
          path,
          message: 'Not Found',
        });
      }
    });

    it('404 without a query for an id that no item can have (NUL, too long)', async () => {
      const { key, id } = await tenantWithCompany();
      const database = t.app.get(Database);
      const reads = jest.spyOn(database.fairQueue, 'run');
      try {
        for (const path of [
          '/v1/companies/%00',
          `/v1/companies/${id}%00`,
          `/v1/companies/%00${id}`,
          '/v1/leads/%00',
          `/v1/companies/${'x'.repeat(101)}`,
        ]) {
          expectErrorEnvelope(await getWithKey(t.app, path, key), {
            status: 404,
            error: 'NOT_FOUND',
            path,
            message: 'Not Found',
          });
        }
        expect(reads).not.toHaveBeenCalled();
        // The longest possible id is looked up (and is not there).
        const longest = `/v1/companies/${'x'.repeat(100)}`;
        expect((await getWithKey(t.app, longest, key)).status).toBe(404);
        expect(reads).toHaveBeenCalledTimes(1);
      } finally {
        reads.mockRestore();
      }
    });

    it('an id that is not valid percent-encoding: the 401 without a key, a 404 with one', async () => {
      const { key } = await tenantWithCompany();
      const path = '/v1/companies/%E0%A4%A';
      const anonymous = await request(t.app.getHttpServer()).get(path);
      expectErrorEnvelope(anonymous, { status: 401, error: 'UNAUTHORIZED', path });
      const response = await getWithKey(t.app, path, key);
      expectErrorEnvelope(response, { status: 404, error: 'NOT_FOUND', path });
      expect(response.headers['x-ratelimit-remaining']).toBeDefined();
    });

    it('the same object as the list, and a 400 for any query parameter', async () => {
      const { workspace, key, id } = await tenantWithCompany();
      const lead = await createLead(t.prisma, { id, workspaceId: workspace.id });
      const companies = await getWithKey(t.app, '/v1/companies', key);
      expect((await getWithKey(t.app, `/v1/companies/${id}`, key)).body).toEqual(
        (companies.body as { data: unknown[] }).data[0],
      );
      const leads = await getWithKey(t.app, '/v1/leads', key);
      expect((await getWithKey(t.app, `/v1/leads/${lead.id}`, key)).body).toEqual(
        (leads.body as { data: unknown[] }).data[0],
      );
      const path = `/v1/companies/${id}?limit=1`;
      expect(expectValidationError(await getWithKey(t.app, path, key), path)).toEqual([
        'property limit should not exist',
      ]);
    });
  });
});
