import type { Workspace } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import {
  itFiltersSinceLikeTheContract,
  itOrdersAndPagesLikeTheContract,
} from '../../support/list-order';
import { createCompany, createContact, createWorkspace } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';

// GET /v1/companies: the company and contact fields, the contacts' order, and the list contract
// (order, paging, `since`, envelope). Parameter validation in detail: query-validation.e2e-spec.ts.
describe('GET /v1/companies', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const list = (key: string, query = '') => getWithKey(t.app, `/v1/companies${query}`, key);

  /** Companies of the workspace with ids `<workspace id>-<suffix>`, inserted in the given order. */
  async function seed(
    workspace: Workspace,
    rows: [suffix: string, intentScore: number, lastSeen?: string][],
  ) {
    for (const [suffix, intentScore, lastSeen] of rows) {
      await createCompany(t.prisma, workspace.id, {
        id: `${workspace.id}-${suffix}`,
        intentScore,
        ...(lastSeen && { lastSeen: new Date(lastSeen) }),
      });
    }
  }

  describe('a company', () => {
    it('has every field of the contract, with its type, and nothing else', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id, {
        name: 'Globex',
        domain: 'globex.example',
        industry: 'Manufacturing',
        size: '201-500',
        country: 'Germany',
        city: 'Berlin',
        revenue: '50M-100M',
        siren: '552100554',
        intentScore: 87.5,
        intentLevel: 'hot',
        icpScore: 72.25,
        commercialScore: 80,
        crmStatus: 'in_crm',
        visitsCount: 14,
        firstSeen: new Date('2026-01-05T07:08:09.010Z'),
        lastSeen: new Date('2026-02-27T23:59:59.999Z'),
      });
      const contact = await createContact(t.prisma, company, {
        name: 'Ada Lovelace',
        jobTitle: 'CTO',
        email: 'ada@globex.example',
        phone: '+33 1 23 45 67 89',
        linkedin: 'https://www.linkedin.com/in/ada',
        seniority: 'c_level',
      });

      const response = await list(key);

      expect(response.status).toBe(200);
      expect(response.body).toStrictEqual({
        total: 1,
        limit: 50,
        offset: 0,
        data: [
          {
            id: company.id,
            name: 'Globex',
            domain: 'globex.example',
            industry: 'Manufacturing',
            size: '201-500',
            country: 'Germany',
            city: 'Berlin',
            revenue: '50M-100M',
            siren: '552100554',
            intentScore: 87.5,
            intentLevel: 'hot',
            icpScore: 72.25,
            commercialScore: 80,
            crmStatus: 'in_crm',
            visitsCount: 14,
            firstSeen: '2026-01-05T07:08:09.010Z',
            lastSeen: '2026-02-27T23:59:59.999Z',
            contacts: [
              {
                id: contact.id,
                name: 'Ada Lovelace',
                jobTitle: 'CTO',
                email: 'ada@globex.example',
                phone: '+33 1 23 45 67 89',
                linkedin: 'https://www.linkedin.com/in/ada',
                seniority: 'c_level',
              },
            ],
          },
        ],
      });
    });

    it('has siren, email, phone and linkedin present as null when unknown, never omitted', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id, { siren: null });
      await createContact(t.prisma, company, { email: null, phone: null, linkedin: null });

      const response = await list(key);

      expect(response.status).toBe(200);
      const [body] = response.body.data;
      expect(body).toHaveProperty('siren', null);
      expect(body.contacts).toHaveLength(1);
      expect(body.contacts[0]).toHaveProperty('email', null);
      expect(body.contacts[0]).toHaveProperty('phone', null);
      expect(body.contacts[0]).toHaveProperty('linkedin', null);
    });

    it('has scores that are numbers, including the bounds 0 and 100', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await createCompany(t.prisma, workspace.id, {
        intentScore: 100,
        icpScore: 0,
        commercialScore: 33.3,
        visitsCount: 0,
      });

      const response = await list(key);

      expect(response.body.data[0]).toMatchObject({
        intentScore: 100,
        icpScore: 0,
        commercialScore: 33.3,
        visitsCount: 0,
      });
      for (const field of ['intentScore', 'icpScore', 'commercialScore', 'visitsCount']) {
        expect(typeof response.body.data[0][field]).toBe('number');
      }
    });

    it('has dates in UTC ISO 8601 with milliseconds, whatever instant is stored', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await createCompany(t.prisma, workspace.id, {
        firstSeen: new Date('2026-01-31T23:30:00+01:00'),
        lastSeen: new Date('2026-02-01T00:00:00-03:00'),
      });

      const response = await list(key);

      expect(response.body.data[0]).toMatchObject({
        firstSeen: '2026-01-31T22:30:00.000Z',
        lastSeen: '2026-02-01T03:00:00.000Z',
      });
    });

    it.each(['hot', 'warm', 'cold'] as const)('round-trips intentLevel %s', async (intentLevel) => {
      const { workspace, key } = await createTenant(t.prisma);
      await createCompany(t.prisma, workspace.id, { intentLevel });

      const response = await list(key);

      expect(response.body.data[0].intentLevel).toBe(intentLevel);
    });

    it.each(['new', 'qualified', 'in_crm', 'contacted', 'won', 'lost'] as const)(
      'round-trips crmStatus %s',
      async (crmStatus) => {
        const { workspace, key } = await createTenant(t.prisma);
        await createCompany(t.prisma, workspace.id, { crmStatus });

        const response = await list(key);

        expect(response.body.data[0].crmStatus).toBe(crmStatus);
      },
    );

    it.each(['c_level', 'vp', 'director', 'manager', 'ic'] as const)(
      'round-trips contact seniority %s',
      async (seniority) => {
        const { workspace, key } = await createTenant(t.prisma);
        const company = await createCompany(t.prisma, workspace.id);
        await createContact(t.prisma, company, { seniority });

        const response = await list(key);

        expect(response.body.data[0].contacts).toEqual([expect.objectContaining({ seniority })]);
      },
    );
  });

  describe('contacts', () => {
    it('is an empty array for a company without contacts', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await createCompany(t.prisma, workspace.id);

      const response = await list(key);

      expect(response.body.data[0].contacts).toStrictEqual([]);
    });

    it('holds only the contacts of that company', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const hot = await createCompany(t.prisma, workspace.id, { intentScore: 90 });
      const cold = await createCompany(t.prisma, workspace.id, { intentScore: 10 });
      const ofHot = await createContact(t.prisma, hot);
      const ofCold = await createContact(t.prisma, cold);

      const response = await list(key);

      const contactIds = (response.body.data as { contacts: { id: string }[] }[]).map((company) =>
        company.contacts.map(({ id }) => id),
      );
      expect(contactIds).toStrictEqual([[ofHot.id], [ofCold.id]]);
    });

    it('is ordered by seniority (c_level, vp, director, manager, ic), then name, then id', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      // Inserted out of order; neither alphabetical seniority nor id order gives the right answer.
      const rows = [
        ['1', 'Zed', 'ic'],
        ['2', 'Bob', 'director'],
        ['3', 'Yann', 'c_level'],
        ['a', 'Dana', 'manager'],
        ['4', 'Alice', 'director'],
        ['B', 'Dana', 'manager'],
        ['5', 'Carl', 'vp'],
        ['6', 'Aaron', 'ic'],
      ] as const;
      for (const [suffix, name, seniority] of rows) {
        await createContact(t.prisma, company, { id: `${company.id}-${suffix}`, name, seniority });
      }

      const response = await list(key);

      const contacts = response.body.data[0].contacts as { id: string; name: string }[];
      expect(contacts.map(({ id, name }) => [id.slice(company.id.length + 1), name])).toStrictEqual(
        [
          ['3', 'Yann'],
          ['5', 'Carl'],
          ['4', 'Alice'],
          ['2', 'Bob'],
          // Same seniority and name: by id, compared byte by byte ('B' is 0x42, 'a' is 0x61).
          ['B', 'Dana'],
          ['a', 'Dana'],
          ['6', 'Aaron'],
          ['1', 'Zed'],
        ],
      );
    });
  });

  describe('the list', () => {
    it('holds only the companies of the key’s workspace', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const other = await createWorkspace(t.prisma);
      const own = await createCompany(t.prisma, workspace.id, { intentScore: 10 });
      await createCompany(t.prisma, other.id, { intentScore: 99 });

      const response = await list(key);

      expect(response.body.total).toBe(1);
      expect(response.body.data.map(({ id }: { id: string }) => id)).toStrictEqual([own.id]);
    });

    itOrdersAndPagesLikeTheContract({ path: '/v1/companies', noun: 'company', app: () => t, seed });
  });

  describe('since, on lastSeen', () => {
    itFiltersSinceLikeTheContract({ path: '/v1/companies', noun: 'company', app: () => t, seed });
  });
});
