import { Client } from 'pg';
import type { Company, Prisma, Workspace } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import { createCompany, createLead } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';
import { until } from '../../support/until';

// The `total` of both lists is not a count of rows: it sums per-day counts that triggers on
// companies and leads keep (migration 20261123000000_list_totals), plus a count of since's own day
// (src/items/list-page-sql.ts). These tests write rows in every way a writer can, and check after
// each write that every total the API gives, with and without `since`, equals a plain count of the
// matching rows; at the end, that the count tables themselves equal a recount from scratch.

type Tenant = { workspace: Workspace; key: string };

interface List {
  path: '/v1/companies' | '/v1/leads';
  /** The truth a total must equal: the workspace's rows at or after `since`, counted. */
  count(workspaceId: string, since?: Date): Promise<number>;
}

/** More than any workspace of this file holds: a page then holds every match. */
const LIMIT = 200;

const DAY_1 = '2026-03-01';
const DAY_2 = '2026-03-02';
const DAY_3 = '2026-03-03';
const DAY_4 = '2026-03-04';
const DAY_5 = '2026-03-05';

/** An instant of a UTC day, noon by default. */
const at = (day: string, time = '12:00:00.000') => new Date(`${day}T${time}Z`);

/**
 * The `since` values every check tries besides none: each day's midnight and noon, so that a count
 * wrong on any one day shows, both in the summed days and in since's own day.
 */
const PROBES = [DAY_1, DAY_2, DAY_3, DAY_4, DAY_5, '2026-03-06'].flatMap((day) => [
  `${day}T00:00:00.000Z`,
  `${day}T12:00:00.000Z`,
]);

describe('list totals kept by the day-count triggers', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Many requests per key; the manual clock never ends a rate-limit window.
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  });

  afterAll(async () => {
    await t.close();
  });

  const companies: List = {
    path: '/v1/companies',
    count: (workspaceId, since) =>
      t.prisma.company.count({ where: { workspaceId, lastSeen: { gte: since } } }),
  };
  const leads: List = {
    path: '/v1/leads',
    count: (workspaceId, since) =>
      t.prisma.lead.count({ where: { workspaceId, createdAt: { gte: since } } }),
  };
  const LISTS = [companies, leads];

  function get(
    list: List,
    tenant: Tenant,
    query: Record<string, string | number | undefined> = {},
  ) {
    const search = new URLSearchParams({ limit: String(LIMIT) });
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) search.set(name, String(value));
    }
    return getWithKey(t.app, `${list.path}?${search.toString()}`, tenant.key);
  }

  /**
   * For each tenant, list and `since` (none, then each of `sinces`): the API's total equals the
   * count of the matching rows, and the page (which holds every match) has that many items. All
   * mismatches are reported at once.
   */
  async function expectExactTotals(tenants: Tenant[], sinces: string[] = PROBES): Promise<void> {
    const given: unknown[] = [];
    const counted: unknown[] = [];
    for (const tenant of tenants) {
      for (const list of LISTS) {
        for (const since of [undefined, ...sinces]) {
          const response = await get(list, tenant, since === undefined ? {} : { since });
          expect(response.status).toBe(200);
          const rows = await list.count(
            tenant.workspace.id,
            since === undefined ? undefined : new Date(since),
          );
          const where = { list: list.path, workspace: tenant.workspace.id, since };
          given.push({ ...where, total: response.body.total, items: response.body.data.length });
          counted.push({ ...where, total: rows, items: Math.min(rows, LIMIT) });
        }
      }
    }
    expect(given).toStrictEqual(counted);
  }

  /** The totals without `since`, to state in a test what the rows are. */
  async function totals(tenant: Tenant): Promise<{ companies: number; leads: number }> {
    const [companyPage, leadPage] = [await get(companies, tenant), await get(leads, tenant)];
    return { companies: companyPage.body.total, leads: leadPage.body.total };
  }

  /** Rows for one multi-row statement (createMany): ids `<workspace id>-<label>`. */
  function companyRows(
    workspaceId: string,
    rows: [label: string, lastSeen: Date][],
  ): Prisma.CompanyCreateManyInput[] {
    return rows.map(([label, lastSeen], i) => ({
      id: `${workspaceId}-${label}`,
      workspaceId,
      name: `Company ${label}`,
      domain: `${label}.example`,
      industry: 'Software',
      size: '51-200',
      country: 'France',
      city: 'Lyon',
      revenue: '10M-50M',
      intentScore: 50 + i,
      intentLevel: 'warm',
      icpScore: 60,
      commercialScore: 55,
      crmStatus: 'new',
      visitsCount: 3,
      firstSeen: at(DAY_1, '00:00:00.000'),
      lastSeen,
    }));
  }

  function leadRows(
    company: Pick<Company, 'id' | 'workspaceId'>,
    rows: [label: string, createdAt: Date][],
  ): Prisma.LeadCreateManyInput[] {
    return rows.map(([label, createdAt], i) => ({
      id: `${company.workspaceId}-${label}`,
      workspaceId: company.workspaceId,
      companyId: company.id,
      contactName: `Contact ${label}`,
      contactTitle: 'VP Sales',
      intentScore: 50 + i,
      intentLevel: 'hot',
      signal: 'Visited the pricing page',
      recommendedAction: 'Call within 24 hours',
      status: 'new',
      createdAt,
    }));
  }

  /** A tenant with companies and leads on days 1 to 3 (leads on the first company). */
  async function seededTenant(): Promise<{ tenant: Tenant; company: Company }> {
    const tenant = await createTenant(t.prisma);
    const id = tenant.workspace.id;
    const company = await createCompany(t.prisma, id, { id: `${id}-c0`, lastSeen: at(DAY_1) });
    await t.prisma.company.createMany({
      data: companyRows(id, [
        ['c1', at(DAY_1, '23:59:59.999')],
        ['c2', at(DAY_2, '00:00:00.000')],
        ['c3', at(DAY_2)],
        ['c4', at(DAY_3)],
      ]),
    });
    await t.prisma.lead.createMany({
      data: leadRows(company, [
        ['l1', at(DAY_1)],
        ['l2', at(DAY_1, '23:59:59.999')],
        ['l3', at(DAY_2, '00:00:00.000')],
        ['l4', at(DAY_3)],
      ]),
    });
    return { tenant, company };
  }

  /**
   * The count tables hold, for every workspace and UTC day, the number of rows a recount from
   * scratch finds (days whose count fell to 0 may stay as rows of 0).
   */
  async function expectCountTablesToEqualARecount(): Promise<void> {
    type DayCount = { workspaceId: string; day: Date; rows: number };
    const [storedCompanies, recountedCompanies, storedLeads, recountedLeads] = [
      await t.prisma.$queryRaw<DayCount[]>`
        SELECT workspace_id AS "workspaceId", day, companies::int AS rows
        FROM company_day_counts WHERE companies <> 0 ORDER BY 1, 2`,
      await t.prisma.$queryRaw<DayCount[]>`
        SELECT workspace_id AS "workspaceId",
          date_bin('1 day', last_seen, timestamptz '2000-01-01 00:00:00+00') AS day,
          count(*)::int AS rows
        FROM companies GROUP BY 1, 2 ORDER BY 1, 2`,
      await t.prisma.$queryRaw<DayCount[]>`
        SELECT workspace_id AS "workspaceId", day, leads::int AS rows
        FROM lead_day_counts WHERE leads <> 0 ORDER BY 1, 2`,
      await t.prisma.$queryRaw<DayCount[]>`
        SELECT workspace_id AS "workspaceId",
          date_bin('1 day', created_at, timestamptz '2000-01-01 00:00:00+00') AS day,
          count(*)::int AS rows
        FROM leads GROUP BY 1, 2 ORDER BY 1, 2`,
    ];
    expect(recountedCompanies.length).toBeGreaterThan(0);
    expect(recountedLeads.length).toBeGreaterThan(0);
    expect(storedCompanies).toStrictEqual(recountedCompanies);
    expect(storedLeads).toStrictEqual(recountedLeads);
    // The filtered totals' counts (migration list_filters), kept by their own triggers through
    // every write of this file: per combination of the filtered values, scores by whole points.
    const [storedCompanyFilters, recountedCompanyFilters, storedLeadFilters, recountedLeadFilters] =
      [
        await t.prisma.$queryRaw<unknown[]>`
          SELECT workspace_id, intent_level::text, crm_status::text, country, intent_score_floor::int,
            sum(companies)::int AS rows
          FROM (SELECT workspace_id, intent_level, crm_status, country, intent_score_floor, companies
            FROM company_filter_counts UNION ALL
            SELECT workspace_id, intent_level, crm_status, country, intent_score_floor, companies
            FROM company_filter_count_deltas) counts
          GROUP BY 1, 2, 3, 4, 5 HAVING sum(companies) <> 0 ORDER BY 1, 2, 3, 4, 5`,
        await t.prisma.$queryRaw<unknown[]>`
          SELECT workspace_id, intent_level::text, crm_status::text, country,
            floor(intent_score)::int AS intent_score_floor, count(*)::int AS rows
          FROM companies GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
        await t.prisma.$queryRaw<unknown[]>`
          SELECT workspace_id, intent_level::text, status::text, assigned_to_id,
            intent_score_floor::int, sum(leads)::int AS rows
          FROM (SELECT workspace_id, intent_level, status, assigned_to_id, intent_score_floor, leads
            FROM lead_filter_counts UNION ALL
            SELECT workspace_id, intent_level, status, assigned_to_id, intent_score_floor, leads
            FROM lead_filter_count_deltas) counts
          GROUP BY 1, 2, 3, 4, 5 HAVING sum(leads) <> 0 ORDER BY 1, 2, 3, 4, 5`,
        await t.prisma.$queryRaw<unknown[]>`
          SELECT workspace_id, intent_level::text, status::text,
            coalesce(assigned_to_id, '') AS assigned_to_id,
            floor(intent_score)::int AS intent_score_floor, count(*)::int AS rows
          FROM leads GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
      ];
    expect(storedCompanyFilters).toStrictEqual(recountedCompanyFilters);
    expect(storedLeadFilters).toStrictEqual(recountedLeadFilters);
  }

  describe('INSERT', () => {
    it('counts rows inserted one at a time, on several days', async () => {
      const tenant = await createTenant(t.prisma);
      const id = tenant.workspace.id;
      const first = await createCompany(t.prisma, id, { lastSeen: at(DAY_1) });
      await createLead(t.prisma, first, { createdAt: at(DAY_1) });
      await expectExactTotals([tenant]);

      await createCompany(t.prisma, id, { lastSeen: at(DAY_1, '23:59:59.999') });
      await createCompany(t.prisma, id, { lastSeen: at(DAY_2, '00:00:00.000') });
      await createCompany(t.prisma, id, { lastSeen: at(DAY_4) });
      await createLead(t.prisma, first, { createdAt: at(DAY_1, '23:59:59.999') });
      await createLead(t.prisma, first, { createdAt: at(DAY_2, '00:00:00.000') });
      await createLead(t.prisma, first, { createdAt: at(DAY_4) });

      expect(await totals(tenant)).toStrictEqual({ companies: 4, leads: 4 });
      await expectExactTotals([tenant]);
    });

    it('counts rows inserted by one multi-row statement, on days with rows and on new days', async () => {
      const tenant = await createTenant(t.prisma);
      const id = tenant.workspace.id;
      const company = await createCompany(t.prisma, id, { id: `${id}-c0`, lastSeen: at(DAY_2) });
      await createLead(t.prisma, company, { createdAt: at(DAY_2) });

      await t.prisma.company.createMany({
        data: companyRows(id, [
          ['c1', at(DAY_1, '00:00:00.000')],
          ['c2', at(DAY_2, '00:00:00.000')],
          ['c3', at(DAY_2, '23:59:59.999')],
          ['c4', at(DAY_3, '00:00:00.001')],
          ['c5', at(DAY_3)],
          ['c6', at(DAY_5)],
        ]),
      });
      await t.prisma.lead.createMany({
        data: leadRows(company, [
          ['l1', at(DAY_1, '00:00:00.000')],
          ['l2', at(DAY_2, '23:59:59.999')],
          ['l3', at(DAY_3, '00:00:00.000')],
          ['l4', at(DAY_3)],
          ['l5', at(DAY_5)],
        ]),
      });

      expect(await totals(tenant)).toStrictEqual({ companies: 7, leads: 6 });
      await expectExactTotals([tenant]);
    });

    it('counts rows inserted for several workspaces in one statement, each in its own total', async () => {
      const [a, b] = [await createTenant(t.prisma), await createTenant(t.prisma)];
      await t.prisma.company.createMany({
        data: [
          ...companyRows(a.workspace.id, [
            ['c1', at(DAY_1)],
            ['c2', at(DAY_2)],
          ]),
          ...companyRows(b.workspace.id, [
            ['c1', at(DAY_2)],
            ['c2', at(DAY_2)],
            ['c3', at(DAY_3)],
          ]),
        ],
      });
      const [ofA, ofB] = [`${a.workspace.id}-c1`, `${b.workspace.id}-c1`];
      await t.prisma.lead.createMany({
        data: [
          ...leadRows({ id: ofA, workspaceId: a.workspace.id }, [['l1', at(DAY_3)]]),
          ...leadRows({ id: ofB, workspaceId: b.workspace.id }, [
            ['l1', at(DAY_1)],
            ['l2', at(DAY_3)],
          ]),
        ],
      });

      expect(await totals(a)).toStrictEqual({ companies: 2, leads: 1 });
      expect(await totals(b)).toStrictEqual({ companies: 3, leads: 2 });
      await expectExactTotals([a, b]);
    });
  });

  describe('UPDATE', () => {
    it('moves a row across midnight UTC, both ways: each day loses and gains it', async () => {
      const { tenant } = await seededTenant();
      const id = tenant.workspace.id;

      // A millisecond later, the next day; then back.
      await t.prisma.company.update({
        where: { id: `${id}-c1` },
        data: { lastSeen: at(DAY_2, '00:00:00.000') },
      });
      await t.prisma.lead.update({
        where: { id: `${id}-l2` },
        data: { createdAt: at(DAY_2, '00:00:00.000') },
      });
      await expectExactTotals([tenant]);

      await t.prisma.company.update({
        where: { id: `${id}-c2` },
        data: { lastSeen: at(DAY_1, '23:59:59.999') },
      });
      await t.prisma.lead.update({
        where: { id: `${id}-l3` },
        data: { createdAt: at(DAY_1, '23:59:59.999') },
      });
      await expectExactTotals([tenant]);
    });

    it('moves many rows from several days to a new day in one statement', async () => {
      const { tenant } = await seededTenant();
      const workspaceId = tenant.workspace.id;

      await t.prisma.company.updateMany({
        where: { workspaceId, lastSeen: { lt: at(DAY_3, '00:00:00.000') } },
        data: { lastSeen: at(DAY_5, '00:00:00.000') },
      });
      await t.prisma.lead.updateMany({
        where: { workspaceId, createdAt: { gte: at(DAY_1, '23:00:00.000') } },
        data: { createdAt: at(DAY_4, '23:59:59.999') },
      });

      expect(await totals(tenant)).toStrictEqual({ companies: 5, leads: 4 });
      await expectExactTotals([tenant]);
    });

    it('shifts rows by an hour in one statement: only those that cross midnight change day', async () => {
      const { tenant } = await seededTenant();
      const workspaceId = tenant.workspace.id;

      // c1 (23:59:59.999) and l2 cross into the next day; the others stay on theirs.
      await t.prisma.$executeRaw`
        UPDATE companies SET last_seen = last_seen + interval '1 hour'
        WHERE workspace_id = ${workspaceId}`;
      await t.prisma.$executeRaw`
        UPDATE leads SET created_at = created_at + interval '1 hour'
        WHERE workspace_id = ${workspaceId}`;
      await expectExactTotals([tenant]);

      // And back: c1 and l2 cross midnight again, the other way.
      await t.prisma.$executeRaw`
        UPDATE companies SET last_seen = last_seen - interval '1 hour'
        WHERE workspace_id = ${workspaceId}`;
      await t.prisma.$executeRaw`
        UPDATE leads SET created_at = created_at - interval '1 hour'
        WHERE workspace_id = ${workspaceId}`;
      await expectExactTotals([tenant]);
    });

    it('leaves every total as it was when only the score changes', async () => {
      const { tenant } = await seededTenant();
      const workspaceId = tenant.workspace.id;
      const before = await totals(tenant);

      await t.prisma.company.updateMany({ where: { workspaceId }, data: { intentScore: 99 } });
      await t.prisma.lead.updateMany({ where: { workspaceId }, data: { intentScore: 1 } });

      expect(await totals(tenant)).toStrictEqual(before);
      expect(before).toStrictEqual({ companies: 5, leads: 4 });
      await expectExactTotals([tenant]);
    });
  });

  describe('UPDATE of the workspace', () => {
    it('moves companies to another workspace, their leads with them (cascade): both totals follow', async () => {
      const { tenant: from, company } = await seededTenant();
      const { tenant: to } = await seededTenant();

      // c0 has every lead of `from`: ON UPDATE CASCADE moves them, an UPDATE of leads.
      await t.prisma.company.updateMany({
        where: { id: { in: [company.id, `${from.workspace.id}-c2`] } },
        data: { workspaceId: to.workspace.id },
      });

      expect(await totals(from)).toStrictEqual({ companies: 3, leads: 0 });
      expect(await totals(to)).toStrictEqual({ companies: 7, leads: 8 });
      await expectExactTotals([from, to]);
    });

    it('moves rows to another workspace and another day in the same statement', async () => {
      const { tenant: from } = await seededTenant();
      const { tenant: to, company: target } = await seededTenant();

      await t.prisma.$executeRaw`
        UPDATE companies
        SET workspace_id = ${to.workspace.id}, last_seen = last_seen + interval '1 day'
        WHERE workspace_id = ${from.workspace.id} AND id <> ${`${from.workspace.id}-c0`}`;
      await t.prisma.$executeRaw`
        UPDATE leads
        SET workspace_id = ${to.workspace.id}, company_id = ${target.id},
          created_at = created_at + interval '2 days'
        WHERE workspace_id = ${from.workspace.id} AND created_at < ${at(DAY_2, '00:00:00.000')}`;

      expect(await totals(from)).toStrictEqual({ companies: 1, leads: 2 });
      expect(await totals(to)).toStrictEqual({ companies: 9, leads: 6 });
      await expectExactTotals([from, to]);
    });

    it('carries the totals along when a workspace’s id changes (cascade to its rows and keys)', async () => {
      const { tenant } = await seededTenant();
      const { tenant: bystander } = await seededTenant();

      const renamed = await t.prisma.workspace.update({
        where: { id: tenant.workspace.id },
        data: { id: `${tenant.workspace.id}-renamed` },
      });
      const moved = { workspace: renamed, key: tenant.key };

      expect(await totals(moved)).toStrictEqual({ companies: 5, leads: 4 });
      await expectExactTotals([moved, bystander]);
      const [stale] = await t.prisma.$queryRaw<[{ rows: number }]>`
        SELECT (SELECT coalesce(sum(companies), 0) FROM company_day_counts
                WHERE workspace_id = ${tenant.workspace.id})::int
             + (SELECT coalesce(sum(leads), 0) FROM lead_day_counts
                WHERE workspace_id = ${tenant.workspace.id})::int AS rows`;
      expect(stale.rows).toBe(0);
    });
  });

  describe('DELETE', () => {
    it('takes deleted rows out of the totals, with the leads of deleted companies', async () => {
      const { tenant, company } = await seededTenant();
      const workspaceId = tenant.workspace.id;

      await t.prisma.lead.deleteMany({ where: { id: { in: [`${workspaceId}-l2`] } } });
      await t.prisma.company.deleteMany({
        where: { id: { in: [`${workspaceId}-c1`, `${workspaceId}-c2`] } },
      });
      expect(await totals(tenant)).toStrictEqual({ companies: 3, leads: 3 });
      await expectExactTotals([tenant]);

      // c0 holds the remaining leads: deleting it deletes them (ON DELETE CASCADE).
      await t.prisma.company.delete({ where: { id: company.id } });
      expect(await totals(tenant)).toStrictEqual({ companies: 2, leads: 0 });
      await expectExactTotals([tenant]);
    });

    it('deletes a whole workspace (cascade) and leaves the other workspaces’ totals right', async () => {
      const { tenant: before } = await seededTenant();
      const { tenant: deleted } = await seededTenant();
      const { tenant: after } = await seededTenant();

      await t.prisma.workspace.delete({ where: { id: deleted.workspace.id } });

      expect(await totals(before)).toStrictEqual({ companies: 5, leads: 4 });
      expect(await totals(after)).toStrictEqual({ companies: 5, leads: 4 });
      await expectExactTotals([before, after]);
      const [left] = await t.prisma.$queryRaw<[{ rows: number }]>`
        SELECT (SELECT coalesce(sum(companies), 0) FROM company_day_counts
                WHERE workspace_id = ${deleted.workspace.id})::int
             + (SELECT coalesce(sum(leads), 0) FROM lead_day_counts
                WHERE workspace_id = ${deleted.workspace.id})::int AS rows`;
      expect(left.rows).toBe(0);
    });
  });

  describe('INSERT … ON CONFLICT DO UPDATE and MERGE', () => {
    it('counts an upsert that inserts some rows and moves others to another day, in one statement', async () => {
      const { tenant, company } = await seededTenant();
      const id = tenant.workspace.id;

      // c1 conflicts and changes day; c3 conflicts and keeps its day (a new score); n1 and n2
      // are new, one on a day with rows and one on a new day.
      await t.prisma.$executeRaw`
        INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
          revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
          visits_count, first_seen, last_seen)
        SELECT v.id, ${id}, 'Upserted', 'upserted.example', 'Software', '51-200', 'France',
          'Lyon', '10M-50M', v.score, 'warm', 60, 55, 'new', 3, v.seen, v.seen
        FROM (VALUES
          (${`${id}-c1`}, 10::float8, ${at(DAY_4)}::timestamptz),
          (${`${id}-c3`}, 20::float8, ${at(DAY_2, '01:00:00.000')}::timestamptz),
          (${`${id}-n1`}, 30::float8, ${at(DAY_2)}::timestamptz),
          (${`${id}-n2`}, 40::float8, ${at(DAY_5, '00:00:00.000')}::timestamptz)
        ) v (id, score, seen)
        ON CONFLICT (id) DO UPDATE
          SET last_seen = excluded.last_seen, intent_score = excluded.intent_score`;
      await t.prisma.$executeRaw`
        INSERT INTO leads (id, workspace_id, company_id, contact_name, contact_title,
          intent_score, intent_level, signal, recommended_action, status, created_at)
        SELECT v.id, ${id}, ${company.id}, 'Upserted', 'VP Sales', v.score, 'hot', 'Visited',
          'Call', 'new', v.created
        FROM (VALUES
          (${`${id}-l1`}, 10::float8, ${at(DAY_2, '00:00:00.000')}::timestamptz),
          (${`${id}-l4`}, 20::float8, ${at(DAY_3, '23:59:59.999')}::timestamptz),
          (${`${id}-n1`}, 30::float8, ${at(DAY_1)}::timestamptz),
          (${`${id}-n2`}, 40::float8, ${at(DAY_4)}::timestamptz)
        ) v (id, score, created)
        ON CONFLICT (id) DO UPDATE
          SET created_at = excluded.created_at, intent_score = excluded.intent_score`;

      expect(await totals(tenant)).toStrictEqual({ companies: 7, leads: 6 });
      await expectExactTotals([tenant]);
    });

    it('counts Prisma’s upsert, creating then moving a row', async () => {
      const { tenant } = await seededTenant();
      const upsert = (lastSeen: Date) =>
        t.prisma.company.upsert({
          where: { id: `${tenant.workspace.id}-u1` },
          create: companyRows(tenant.workspace.id, [['u1', lastSeen]])[0],
          update: { lastSeen },
        });

      await upsert(at(DAY_3, '23:59:59.999'));
      await expectExactTotals([tenant]);
      await upsert(at(DAY_4, '00:00:00.000'));
      await expectExactTotals([tenant]);
      expect((await totals(tenant)).companies).toBe(6);
    });

    it('counts a MERGE that inserts, moves and deletes rows in one statement', async () => {
      const { tenant } = await seededTenant();
      const id = tenant.workspace.id;

      await t.prisma.$executeRaw`
        MERGE INTO companies c
        USING (VALUES
          (${`${id}-c1`}, ${at(DAY_5)}::timestamptz),
          (${`${id}-c2`}, NULL),
          (${`${id}-m1`}, ${at(DAY_4)}::timestamptz)
        ) v (id, seen) ON c.id = v.id
        WHEN MATCHED AND v.seen IS NULL THEN DELETE
        WHEN MATCHED THEN UPDATE SET last_seen = v.seen
        WHEN NOT MATCHED THEN INSERT (id, workspace_id, name, domain, industry, size, country,
          city, revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
          visits_count, first_seen, last_seen)
        VALUES (v.id, ${id}, 'Merged', 'merged.example', 'Software', '51-200', 'France', 'Lyon',
          '10M-50M', 50, 'warm', 60, 55, 'new', 3, v.seen, v.seen)`;

      expect((await totals(tenant)).companies).toBe(5);
      await expectExactTotals([tenant]);
    });
  });

  describe('since at the edges of UTC days', () => {
    let tenant: Tenant;

    // The same instants for companies (lastSeen) and leads (createdAt): 13 rows each.
    const TIMELINE = [
      '1999-12-31T12:00:00.000Z', // the day before the days' origin (2000-01-01)
      '1999-12-31T23:59:59.999Z',
      '2000-01-01T00:00:00.000Z',
      '2026-03-09T23:59:59.999Z',
      '2026-03-10T00:00:00.000Z',
      '2026-03-10T00:00:00.001Z',
      '2026-03-10T11:59:59.999Z',
      '2026-03-10T12:00:00.000Z',
      '2026-03-10T23:59:59.999Z',
      '2026-03-11T00:00:00.000Z',
      '2026-03-11T09:00:00.000Z',
      '2026-04-04T13:00:00.000Z', // Chatham leaves daylight time during this UTC day
      '2026-04-05T00:30:00.000Z',
    ];

    beforeAll(async () => {
      tenant = await createTenant(t.prisma);
      const rows = TIMELINE.map((instant, i): [string, Date] => [`r${i}`, new Date(instant)]);
      await t.prisma.company.createMany({ data: companyRows(tenant.workspace.id, rows) });
      const [first] = companyRows(tenant.workspace.id, rows);
      await t.prisma.lead.createMany({
        data: leadRows({ id: first.id, workspaceId: tenant.workspace.id }, rows),
      });
    });

    it.each([
      ['midnight UTC of a day with a row at exactly midnight', '2026-03-10T00:00:00.000Z', 9],
      ['a date alone: that midnight UTC', '2026-03-10', 9],
      ['1 ms before midnight: the previous day’s last row', '2026-03-09T23:59:59.999Z', 10],
      ['1 ms after midnight: not the midnight row', '2026-03-10T00:00:00.001Z', 8],
      ['noon, with rows 1 ms on either side', '2026-03-10T12:00:00.000Z', 6],
      ['1 ms before noon', '2026-03-10T11:59:59.999Z', 7],
      ['in the middle of a day, between rows', '2026-03-10T06:00:00.000Z', 7],
      ['the last ms of a day', '2026-03-10T23:59:59.999Z', 5],
      ['+12:45: midnight UTC, on the next local day', '2026-03-11T12:45:00.000+12:45', 4],
      ['+12:45: 1 ms before midnight UTC', '2026-03-11T12:44:59.999+12:45', 5],
      ['+12:45: local midnight, the previous UTC day', '2026-03-11T00:00:00.000+12:45', 7],
      ['-09:30: midnight UTC, on the previous local day', '2026-03-10T14:30:00.000-09:30', 4],
      ['-09:30: 1 ms before midnight UTC', '2026-03-10T14:29:59.999-09:30', 5],
      ['on a UTC day in which Chatham’s clocks change', '2026-04-04T12:00:00.000Z', 2],
      ['at the last row', '2026-04-05T00:30:00.000Z', 1],
      ['1 ms after the last row', '2026-04-05T00:30:00.001Z', 0],
      ['after every row, on a later day', '2027-01-01', 0],
      ['before every row, at midnight', '1999-12-31T00:00:00.000Z', 13],
      ['before every row, days before', '1999-12-01T15:00:00.000Z', 13],
      ['before every row, in year 0001', '0001-01-01', 13],
      ['in the middle of the day before the days’ origin', '1999-12-31T18:00:00.000Z', 12],
      ['1 ms before the days’ origin', '1999-12-31T23:59:59.999Z', 12],
      ['at the days’ origin, 2000-01-01', '2000-01-01T00:00:00.000Z', 11],
      ['1 ms after the days’ origin', '2000-01-01T00:00:00.001Z', 10],
    ])('since %s (%s): total %d', async (_case, since, expected) => {
      for (const list of LISTS) {
        const response = await get(list, tenant, { since });
        const rows = await list.count(tenant.workspace.id, new Date(since));

        expect(response.status).toBe(200);
        expect({ list: list.path, counted: rows }).toStrictEqual({
          list: list.path,
          counted: expected,
        });
        expect({
          list: list.path,
          total: response.body.total,
          items: response.body.data.length,
        }).toStrictEqual({ list: list.path, total: expected, items: expected });
      }
    });
  });

  describe('under concurrent writes', () => {
    it('gives pages whose length agrees with their total while another connection writes', async () => {
      const { tenant, company } = await seededTenant();
      const workspaceId = tenant.workspace.id;
      const writer = new Client({ connectionString: t.database.url });
      await writer.connect();

      /**
       * One transaction: 1 to 4 companies and as many leads (so that the totals change from one
       * commit to the next), some at 23:30 that the next round pushes past midnight by an hour;
       * the rows of two rounds ago deleted.
       */
      const instants = [at(DAY_1, '23:30:00.000'), at(DAY_2), at(DAY_3, '00:00:00.000')];
      const idsOf = (n: number) =>
        Array.from({ length: n < 0 ? 0 : 1 + (n % 4) }, (_, i) => `${workspaceId}-w${n}-${i}`);
      const round = async (n: number) => {
        const ids = idsOf(n);
        const seen = ids.map((_, i) => instants[i % instants.length].toISOString());
        await writer.query('BEGIN');
        await writer.query(
          `INSERT INTO companies (id, workspace_id, name, domain, industry, size, country, city,
             revenue, intent_score, intent_level, icp_score, commercial_score, crm_status,
             visits_count, first_seen, last_seen)
           SELECT id, $1, 'Churn', 'churn.example', 'Software', '51-200', 'France', 'Lyon',
             '10M-50M', 40, 'warm', 60, 55, 'new', 3, seen, seen
           FROM unnest($2::text[], $3::timestamptz[]) AS v (id, seen)`,
          [workspaceId, ids, seen],
        );
        await writer.query(
          `INSERT INTO leads (id, workspace_id, company_id, contact_name, contact_title,
             intent_score, intent_level, signal, recommended_action, status, created_at)
           SELECT id, $1, $2, 'Churn', 'VP Sales', 40, 'hot', 'Visited', 'Call', 'new', created
           FROM unnest($3::text[], $4::timestamptz[]) AS v (id, created)`,
          [workspaceId, company.id, ids, seen],
        );
        for (const table of ['companies', 'leads']) {
          await writer.query(`DELETE FROM ${table} WHERE id = ANY($1::text[])`, [idsOf(n - 2)]);
        }
        await writer.query(
          `UPDATE companies SET last_seen = last_seen + interval '1 hour' WHERE id = ANY($1::text[])`,
          [idsOf(n - 1)],
        );
        await writer.query(
          `UPDATE leads SET created_at = created_at + interval '1 hour' WHERE id = ANY($1::text[])`,
          [idsOf(n - 1)],
        );
        await writer.query('COMMIT');
      };

      const queries = [
        { limit: LIMIT, offset: 0 },
        { limit: 3, offset: 4 },
        { limit: 3, offset: 8 },
        { limit: 5, offset: 10 },
        { limit: LIMIT, offset: 0, since: `${DAY_2}T00:00:00.000Z` },
        { limit: 2, offset: 3, since: `${DAY_2}T00:00:00.000Z` },
        { limit: LIMIT, offset: 0, since: `${DAY_2}T12:00:00.000Z` },
      ];
      const disagreements: unknown[] = [];
      let writing = true;
      await round(0);
      const churn = (async () => {
        for (let n = 1; writing; n++) await round(n);
      })();
      try {
        for (let i = 0; i < 56; i++) {
          const list = LISTS[i % LISTS.length];
          const query = queries[Math.floor(i / LISTS.length) % queries.length];
          const response = await get(list, tenant, query);
          expect(response.status).toBe(200);
          const { total, data } = response.body as { total: number; data: unknown[] };
          const expected = Math.min(query.limit, Math.max(0, total - query.offset));
          if (data.length !== expected) {
            disagreements.push({ list: list.path, query, total, items: data.length });
          }
        }
      } finally {
        writing = false;
        await churn.finally(() => writer.end());
      }

      expect(disagreements).toStrictEqual([]);
      await expectExactTotals([tenant]);
    });
  });

  describe('after all of the above', () => {
    it('leaves the count tables equal to a recount of every workspace’s rows per UTC day', async () => {
      await seededTenant(); // never an empty database, even when run alone
      await expectCountTablesToEqualARecount();
    });

    it('folds the filter counts’ deltas into their base without changing a total', async () => {
      const { tenant } = await seededTenant();
      const filtered = async () =>
        Promise.all(
          ['/v1/companies?intentLevel=warm', '/v1/leads?status=new,contacted'].map(
            async (path) => (await getWithKey(t.app, path, tenant.key)).body.total as number,
          ),
        );
      const before = await filtered();
      // The deltas of transactions that have ended (below the oldest one running, in any
      // database of the cluster: other test files' included) are the ones a fold moves.
      const endedDeltas = async (horizon: string) =>
        (
          await t.prisma.$queryRawUnsafe<{ n: number }[]>(
            `SELECT ((SELECT count(*) FROM company_filter_count_deltas WHERE txid < $1::xid8)
              + (SELECT count(*) FROM lead_filter_count_deltas WHERE txid < $1::xid8))::int AS n`,
            horizon,
          )
        )[0].n;
      // Other sessions' open transactions may hold the horizon below this file's deltas for a
      // while: read it again until some have ended.
      const horizon = await until('deltas of ended transactions', async () => {
        const [{ horizon: now }] = await t.prisma.$queryRaw<{ horizon: string }[]>`
          SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`;
        return (await endedDeltas(now)) > 0 && now;
      });
      // What one transaction in 64 does for the workspaces it writes: here, for every one that
      // has deltas (deleted workspaces' included: their rows net to 0).
      await t.prisma.$executeRawUnsafe(`SELECT company_filter_counts_fold(workspace_id)
        FROM (SELECT DISTINCT workspace_id FROM company_filter_count_deltas) written`);
      await t.prisma.$executeRawUnsafe(`SELECT lead_filter_counts_fold(workspace_id)
        FROM (SELECT DISTINCT workspace_id FROM lead_filter_count_deltas) written`);
      expect(await endedDeltas(horizon)).toBe(0);
      expect(await filtered()).toStrictEqual(before);
      await expectCountTablesToEqualARecount();
    });
  });

  // Last: TRUNCATE empties every workspace of this file's database.
  describe('TRUNCATE', () => {
    it('empties the lead totals on TRUNCATE leads, and counts new leads again', async () => {
      const { tenant, company } = await seededTenant();

      await t.prisma.$executeRawUnsafe('TRUNCATE leads');
      expect(await totals(tenant)).toStrictEqual({ companies: 5, leads: 0 });
      await expectExactTotals([tenant]);

      await t.prisma.lead.createMany({
        data: leadRows(company, [
          ['l1', at(DAY_1)],
          ['l2', at(DAY_1)],
        ]),
      });
      expect(await totals(tenant)).toStrictEqual({ companies: 5, leads: 2 });
      await expectExactTotals([tenant]);
    });

    it('gives totals of 0 for every workspace after TRUNCATE companies CASCADE, and counts new rows again', async () => {
      const [a, b] = [(await seededTenant()).tenant, (await seededTenant()).tenant];

      await t.prisma.$executeRawUnsafe('TRUNCATE companies CASCADE');

      expect(await totals(a)).toStrictEqual({ companies: 0, leads: 0 });
      expect(await totals(b)).toStrictEqual({ companies: 0, leads: 0 });
      await expectExactTotals([a, b]);

      // The same days as before: their counts start again from 0.
      const company = await createCompany(t.prisma, a.workspace.id, { lastSeen: at(DAY_1) });
      await createLead(t.prisma, company, { createdAt: at(DAY_1) });
      await t.prisma.company.createMany({
        data: companyRows(b.workspace.id, [
          ['c1', at(DAY_1)],
          ['c2', at(DAY_2, '00:00:00.000')],
        ]),
      });
      expect(await totals(a)).toStrictEqual({ companies: 1, leads: 1 });
      expect(await totals(b)).toStrictEqual({ companies: 2, leads: 0 });
      await expectExactTotals([a, b]);
      await expectCountTablesToEqualARecount();
    });
  });
});
