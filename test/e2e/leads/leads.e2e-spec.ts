import type { Workspace } from '../../../src/generated/prisma/client';
import { createTestApp, type TestApp } from '../../support/app';
import {
  itFiltersSinceLikeTheContract,
  itOrdersAndPagesLikeTheContract,
} from '../../support/list-order';
import { createCompany, createLead, createWorkspace } from '../../support/factories';
import { createTenant, getWithKey } from '../../support/http';

// GET /v1/leads: the lead fields and the list contract (order, paging, `since` on createdAt,
// envelope), the same as companies (docs/api.md). Parameter validation in detail:
// query-validation.e2e-spec.ts.
describe('GET /v1/leads', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });

  afterAll(async () => {
    await t.close();
  });

  const list = (key: string, query = '') => getWithKey(t.app, `/v1/leads${query}`, key);

  /** Leads of one company of the workspace, ids `<workspace id>-<suffix>`, in the given order. */
  async function seed(
    workspace: Workspace,
    rows: [suffix: string, intentScore: number, createdAt?: string][],
  ) {
    const company = await createCompany(t.prisma, workspace.id);
    for (const [suffix, intentScore, createdAt] of rows) {
      await createLead(t.prisma, company, {
        id: `${workspace.id}-${suffix}`,
        intentScore,
        ...(createdAt && { createdAt: new Date(createdAt) }),
      });
    }
  }

  describe('a lead', () => {
    it('has every field of the contract, with its type, and nothing else', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id, { name: 'Initech' });
      const lead = await createLead(t.prisma, company, {
        contactName: 'Peter Gibbons',
        contactTitle: 'Software Engineer',
        contactEmail: 'peter@initech.example',
        intentScore: 82.5,
        intentLevel: 'warm',
        signal: 'Read three case studies',
        recommendedAction: 'Send the ROI calculator',
        status: 'qualified',
        assignedToId: 'usr_42',
        createdAt: new Date('2026-02-14T06:07:08.009Z'),
      });

      const response = await list(key);

      expect(response.status).toBe(200);
      expect(response.body).toStrictEqual({
        total: 1,
        limit: 50,
        offset: 0,
        data: [
          {
            id: lead.id,
            companyId: company.id,
            companyName: 'Initech',
            contactName: 'Peter Gibbons',
            contactTitle: 'Software Engineer',
            intentScore: 82.5,
            intentLevel: 'warm',
            signal: 'Read three case studies',
            recommendedAction: 'Send the ROI calculator',
            status: 'qualified',
            createdAt: '2026-02-14T06:07:08.009Z',
            contactEmail: 'peter@initech.example',
            assignedToId: 'usr_42',
          },
        ],
      });
    });

    it('has contactEmail and assignedToId present as null when unknown, never omitted', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      await createLead(t.prisma, company, { contactEmail: null, assignedToId: null });

      const response = await list(key);

      expect(response.status).toBe(200);
      expect(response.body.data[0]).toHaveProperty('contactEmail', null);
      expect(response.body.data[0]).toHaveProperty('assignedToId', null);
    });

    it('has a score that is a number, including the bounds 0 and 100', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      await seed(workspace, [
        ['top', 100],
        ['bottom', 0],
      ]);

      const response = await list(key);

      expect(
        response.body.data.map(({ intentScore }: { intentScore: unknown }) => intentScore),
      ).toStrictEqual([100, 0]);
    });

    it('has createdAt in UTC ISO 8601 with milliseconds, whatever instant is stored', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      await createLead(t.prisma, company, { createdAt: new Date('2026-03-01T00:15:00+02:00') });

      const response = await list(key);

      expect(response.body.data[0].createdAt).toBe('2026-02-28T22:15:00.000Z');
    });

    it('has companyName equal to the name of its own company', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const hooli = await createCompany(t.prisma, workspace.id, { name: 'Hooli' });
      const piedPiper = await createCompany(t.prisma, workspace.id, { name: 'Pied Piper' });
      await createLead(t.prisma, hooli, { intentScore: 90 });
      await createLead(t.prisma, piedPiper, { intentScore: 80 });
      await createLead(t.prisma, hooli, { intentScore: 70 });

      const response = await list(key);

      const pairs = (response.body.data as { companyId: string; companyName: string }[]).map(
        ({ companyId, companyName }) => [companyId, companyName],
      );
      expect(pairs).toStrictEqual([
        [hooli.id, 'Hooli'],
        [piedPiper.id, 'Pied Piper'],
        [hooli.id, 'Hooli'],
      ]);
    });

    it.each(['new', 'contacted', 'qualified', 'converted', 'dismissed'] as const)(
      'round-trips status %s',
      async (status) => {
        const { workspace, key } = await createTenant(t.prisma);
        const company = await createCompany(t.prisma, workspace.id);
        await createLead(t.prisma, company, { status });

        const response = await list(key);

        expect(response.body.data[0].status).toBe(status);
      },
    );

    it.each(['hot', 'warm', 'cold'] as const)('round-trips intentLevel %s', async (intentLevel) => {
      const { workspace, key } = await createTenant(t.prisma);
      const company = await createCompany(t.prisma, workspace.id);
      await createLead(t.prisma, company, { intentLevel });

      const response = await list(key);

      expect(response.body.data[0].intentLevel).toBe(intentLevel);
    });
  });

  describe('the list', () => {
    it('holds only the leads of the key’s workspace', async () => {
      const { workspace, key } = await createTenant(t.prisma);
      const other = await createWorkspace(t.prisma);
      const own = await createLead(t.prisma, await createCompany(t.prisma, workspace.id), {
        intentScore: 10,
      });
      await createLead(t.prisma, await createCompany(t.prisma, other.id), { intentScore: 99 });

      const response = await list(key);

      expect(response.body.total).toBe(1);
      expect(response.body.data.map(({ id }: { id: string }) => id)).toStrictEqual([own.id]);
    });

    itOrdersAndPagesLikeTheContract({ path: '/v1/leads', noun: 'lead', app: () => t, seed });
  });

  describe('since, on createdAt', () => {
    itFiltersSinceLikeTheContract({ path: '/v1/leads', noun: 'lead', app: () => t, seed });
  });
});
