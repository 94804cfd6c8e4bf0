import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompanyDto, ContactDto } from '../../../src/companies/dto/company.dto';
import { COMPANY_FIELDS, MAX_CONTACTS_PER_COMPANY } from '../../../src/companies/company.fields';
import type { LeadDto } from '../../../src/leads/dto/lead.dto';
import { type AdminRun, runAdminCommand } from '../../support/admin';
import { createTestApp, type TestApp } from '../../support/app';
import {
  companyRecord,
  contactRecord,
  createApiKey,
  createCompany,
  createContact,
  createLead,
  createWorkspace,
  leadRecord,
} from '../../support/factories';
import { propertyOptions } from '../../support/fast-check';
import { getWithKey, pageThrough } from '../../support/http';

// `import` and `seed --demo` of the admin tool (docs/admin.md, "Importing data"): what goes in comes back
// out of the API unchanged, and a file with any bad record writes nothing.

const SENIORITY_ORDER = ['c_level', 'vp', 'director', 'manager', 'ic'];
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The contract's order: intentScore descending, then id; contacts by seniority, name, id. */
function asListed(companies: CompanyDto[]): CompanyDto[] {
  return [...companies]
    .sort((a, b) => b.intentScore - a.intentScore || compare(a.id, b.id))
    .map((c) => ({
      ...c,
      contacts: [...c.contacts].sort(
        (a, b) =>
          SENIORITY_ORDER.indexOf(a.seniority) - SENIORITY_ORDER.indexOf(b.seniority) ||
          compare(a.name, b.name) ||
          compare(a.id, b.id),
      ),
    }));
}

function leadsAsListed(leads: LeadDto[]): LeadDto[] {
  return [...leads].sort((a, b) => b.intentScore - a.intentScore || compare(a.id, b.id));
}

describe('admin import', () => {
  let t: TestApp;
  let directory: string;

  beforeAll(async () => {
    t = await createTestApp();
    directory = await mkdtemp(join(tmpdir(), 'admin-import-'));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
    await t.close();
  });

  function admin(...argv: string[]): Promise<AdminRun> {
    return runAdminCommand({ DATABASE_URL: t.database.url }, ...argv);
  }

  let files = 0;
  async function fileWith(content: unknown): Promise<string> {
    const path = join(directory, `import-${++files}.json`);
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  }

  /** `import --json`: success, and stdout is exactly one JSON document. */
  async function importJson(workspaceId: string, content: unknown): Promise<unknown> {
    const run = await admin(
      'import',
      '--workspace',
      workspaceId,
      '--file',
      await fileWith(content),
      '--json',
    );
    expect(run).toMatchObject({ stderr: '', status: 0 });
    return JSON.parse(run.stdout) as unknown;
  }

  async function importRefused(workspaceId: string, content: unknown): Promise<string[]> {
    const run = await admin(
      'import',
      '--workspace',
      workspaceId,
      '--file',
      await fileWith(content),
      '--json',
    );
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe('');
    return run.stderr.trimEnd().split('\n');
  }

  async function listed(key: string) {
    const companies = await getWithKey(t.app, '/v1/companies?limit=200', key);
    const leads = await getWithKey(t.app, '/v1/leads?limit=200', key);
    expect([companies.status, leads.status]).toEqual([200, 200]);
    return { companies: companies.body, leads: leads.body };
  }

  async function rowCounts(workspaceId: string) {
    const where = { workspaceId };
    return {
      companies: await t.prisma.company.count({ where }),
      contacts: await t.prisma.contact.count({ where }),
      leads: await t.prisma.lead.count({ where }),
    };
  }

  describe('round trip', () => {
    it('returns through the API exactly the objects imported, in the contract’s order', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const tiedFirst = companyRecord({ id: 'co_rt_b', intentScore: 88.5, siren: '732829320' });
      tiedFirst.contacts = [
        contactRecord({ name: 'Zoe Adams', seniority: 'ic', email: 'zoe@example.com' }),
        contactRecord({
          name: 'Yann Brun',
          seniority: 'c_level',
          linkedin: 'https://www.linkedin.com/in/yb',
        }),
        contactRecord({ name: 'Anna Brun', seniority: 'c_level', phone: '+33 6 12 34 56 78' }),
        contactRecord({ id: 'ct_rt_2', name: 'Sam Lee', seniority: 'manager' }),
        contactRecord({ id: 'ct_rt_10', name: 'Sam Lee', seniority: 'manager' }),
        contactRecord({ name: 'Vic Hale', seniority: 'vp' }),
      ];
      const tiedSecond = companyRecord({ id: 'co_rt_a', intentScore: 88.5, crmStatus: 'in_crm' });
      const cold = companyRecord({
        intentScore: 12.25,
        intentLevel: 'cold',
        icpScore: 0,
        commercialScore: 100,
        visitsCount: 0,
        crmStatus: 'lost',
        firstSeen: '2026-01-31T23:59:59.999Z',
        lastSeen: '2026-01-31T23:59:59.999Z',
        contacts: [
          contactRecord({
            email: 'a@b.example',
            phone: '+1 202 555 0100',
            linkedin: 'https://x.example/a',
          }),
        ],
      });
      const hottest = companyRecord({ intentScore: 100, intentLevel: 'hot', crmStatus: 'won' });
      const companies = [cold, tiedFirst, hottest, tiedSecond];
      const leads = [
        leadRecord(cold, { intentScore: 30, intentLevel: 'cold', status: 'dismissed' }),
        leadRecord(hottest, {
          intentScore: 95,
          contactEmail: 'ceo@hot.example',
          assignedToId: 'usr_42',
        }),
        leadRecord(tiedFirst, {
          intentScore: 95,
          status: 'converted',
          createdAt: '2026-02-28T23:00:00.001Z',
        }),
      ];

      const counts = await importJson(workspace.id, { companies, leads });

      expect(counts).toStrictEqual({ companies: 4, contacts: 7, leads: 3 });
      const api = await listed(key);
      expect(api.companies).toStrictEqual({
        total: 4,
        limit: 200,
        offset: 0,
        data: asListed(companies),
      });
      expect(api.leads).toStrictEqual({
        total: 3,
        limit: 200,
        offset: 0,
        data: leadsAsListed(leads),
      });
      // Spelled out once, so that the expected order does not rest on the helper alone.
      expect(api.companies.data.map((c: CompanyDto) => c.id)).toEqual([
        hottest.id,
        'co_rt_a',
        'co_rt_b',
        cold.id,
      ]);
      expect(api.companies.data[2].contacts.map((c: ContactDto) => c.name)).toEqual([
        'Anna Brun',
        'Yann Brun',
        'Vic Hale',
        'Sam Lee',
        'Sam Lee',
        'Zoe Adams',
      ]);
      expect(api.companies.data[2].contacts[3].id).toBe('ct_rt_10');
    });

    it('imports docs/admin.md’s example, docs/examples/import.json, cleanly: the API returns it', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const example = join(__dirname, '../../..', 'docs', 'examples', 'import.json');
      const file = JSON.parse(await readFile(example, 'utf8')) as {
        companies: CompanyDto[];
        leads: LeadDto[];
      };

      const run = await admin('import', '--workspace', workspace.id, '--file', example, '--json');

      expect(run).toMatchObject({ status: 0, stderr: '' });
      expect(JSON.parse(run.stdout)).toStrictEqual({
        companies: file.companies.length,
        contacts: file.companies.flatMap((c) => c.contacts).length,
        leads: file.leads.length,
      });
      expect(file.companies.length).toBeGreaterThan(1);
      expect(file.leads.length).toBeGreaterThan(1);
      const api = await listed(key);
      expect(api.companies.data).toStrictEqual(asListed(file.companies));
      expect(api.leads.data).toStrictEqual(leadsAsListed(file.leads));
    });

    it('stores a date-time given with an offset as that instant, returned in UTC', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const offset = companyRecord({
        firstSeen: '2026-02-01T10:00:00+02:00',
        lastSeen: '2026-02-02',
      });

      await importJson(workspace.id, { companies: [offset] });

      const [stored] = (await listed(key)).companies.data;
      expect(stored).toMatchObject({
        firstSeen: '2026-02-01T08:00:00.000Z',
        lastSeen: '2026-02-02T00:00:00.000Z',
      });
    });

    it('keeps dates decades apart, to the millisecond', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const spread = companyRecord({
        firstSeen: '1970-01-01T00:00:00.000Z',
        lastSeen: '9999-12-31T23:59:59.999Z',
      });
      const early = leadRecord(spread, { createdAt: '1970-01-01T00:00:00.001Z' });

      await importJson(workspace.id, { companies: [spread], leads: [early] });

      expect(await listed(key)).toMatchObject({
        companies: { data: [spread] },
        leads: { data: [early] },
      });
    });

    it('prints one line without --json', async () => {
      const workspace = await createWorkspace(t.prisma);
      const only = companyRecord({ contacts: [contactRecord(), contactRecord()] });

      const run = await admin(
        'import',
        '--workspace',
        workspace.id,
        '--file',
        await fileWith({ companies: [only], leads: [leadRecord(only)] }),
      );

      expect(run).toStrictEqual({
        status: 0,
        stdout: `Imported 1 company, 2 contacts and 1 lead into workspace ${workspace.id}.\n`,
        stderr: '',
      });
    });

    it('accepts a file with only leads, on companies already stored', async () => {
      const workspace = await createWorkspace(t.prisma);
      const stored = await createCompany(t.prisma, workspace.id, { name: 'Stored Co' });
      const { key } = await createApiKey(t.prisma, workspace.id);
      const onStored = leadRecord({ ...companyRecord(), id: stored.id, name: 'Stored Co' });

      await expect(importJson(workspace.id, { leads: [onStored] })).resolves.toStrictEqual({
        companies: 0,
        contacts: 0,
        leads: 1,
      });

      expect((await listed(key)).leads.data).toStrictEqual([onStored]);
    });
  });

  describe('re-import', () => {
    it('updates records in place by id, replaces each company’s contacts, keeps the rest', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const [a1, a2, a3, b1] = [contactRecord(), contactRecord(), contactRecord(), contactRecord()];
      const a = companyRecord({ contacts: [a1, a2, a3] });
      const b = companyRecord({ contacts: [b1] });
      const firstLead = leadRecord(a);
      await importJson(workspace.id, { companies: [a, b], leads: [firstLead] });

      const a4 = contactRecord({ seniority: 'c_level', name: 'New Person' });
      const aChanged = companyRecord({
        ...a,
        name: 'Renamed Co',
        intentScore: 91,
        intentLevel: 'hot',
        siren: '552100554',
        lastSeen: '2026-03-01T00:00:00.000Z',
        contacts: [{ ...a2, jobTitle: 'Chief Executive Officer', email: 'new@example.com' }, a4],
      });
      const leadChanged = { ...firstLead, companyName: 'Renamed Co', status: 'qualified' as const };
      const leadOnB = leadRecord(b, { intentScore: 10, intentLevel: 'cold' });
      const counts = await importJson(workspace.id, {
        companies: [aChanged],
        leads: [leadChanged, leadOnB],
      });

      expect(counts).toStrictEqual({ companies: 1, contacts: 2, leads: 2 });
      const api = await listed(key);
      expect(api.companies.data).toStrictEqual(asListed([aChanged, b]));
      expect(api.leads.data).toStrictEqual(leadsAsListed([leadChanged, leadOnB]));
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
        companies: 2,
        contacts: 3,
        leads: 2,
      });
      await expect(t.prisma.contact.count({ where: { id: { in: [a1.id, a3.id] } } })).resolves.toBe(
        0,
      );
    });

    it('imports the same file twice to the same rows (batches of several thousand rows)', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const companies = Array.from({ length: 2_000 }, (_, i) =>
        companyRecord({
          intentScore: i % 101,
          contacts: [
            contactRecord(),
            contactRecord({ seniority: 'vp' }),
            contactRecord({ seniority: 'ic' }),
          ],
        }),
      );
      const leads = companies.slice(0, 50).map((c) => leadRecord(c));
      const file = { companies, leads };

      for (let run = 0; run < 2; run++) {
        await expect(importJson(workspace.id, file)).resolves.toStrictEqual({
          companies: 2_000,
          contacts: 6_000,
          leads: 50,
        });
        await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
          companies: 2_000,
          contacts: 6_000,
          leads: 50,
        });
      }
      const { companies: page } = await listed(key);
      expect(page.total).toBe(2_000);
      expect(page.data.map((c: CompanyDto) => c.id)).toEqual(
        asListed(companies)
          .slice(0, 200)
          .map((c) => c.id),
      );
      expect(page.data[0]).toStrictEqual(asListed(companies)[0]);
    });
  });

  describe('refusals: nothing is written', () => {
    it('names index, id and field of every bad record, and writes none of the good ones', async () => {
      const workspace = await createWorkspace(t.prisma);
      const stored = companyRecord({ name: 'Stored Name' });
      await importJson(workspace.id, { companies: [stored] });
      const before = await rowCounts(workspace.id);
      const good = companyRecord({ contacts: [contactRecord()] });
      const bad = companyRecord({ id: 'co_bad_9', intentScore: 120 });
      const badContact = contactRecord({
        id: 'ct_bad_1',
        seniority: 'boss' as ContactDto['seniority'],
      });
      const withBadContact = companyRecord({
        id: 'co_bad_contact',
        contacts: [contactRecord(), badContact],
      });
      const missingField: Partial<CompanyDto> = companyRecord({ id: 'co_bad_missing' });
      delete missingField.visitsCount;
      const badLead = leadRecord(good, {
        id: 'ld_bad_1',
        status: 'won' as LeadDto['status'],
        createdAt: 'soon',
      });

      const lines = await importRefused(workspace.id, {
        companies: [good, { ...stored, name: 'Overwritten?' }, bad, withBadContact, missingField],
        leads: [leadRecord(good), badLead],
      });

      expect(lines).toEqual([
        'error: import refused, nothing was written: 4 records are invalid',
        '  companies[2] (id co_bad_9): intentScore must be a number between 0 and 100',
        '  companies[3].contacts[1] (id ct_bad_1): seniority must be one of c_level, vp, director, manager, ic',
        '  companies[4] (id co_bad_missing): visitsCount is required',
        '  leads[1] (id ld_bad_1): status must be one of new, contacted, qualified, converted, dismissed; createdAt must be an ISO 8601 date-time',
      ]);
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual(before);
      await expect(
        t.prisma.company.findUnique({ where: { id: stored.id } }),
      ).resolves.toMatchObject({
        name: 'Stored Name',
      });
      await expect(t.prisma.company.count({ where: { id: good.id } })).resolves.toBe(0);
    });

    it('refuses ids of another workspace: company, contact and lead', async () => {
      const other = await createWorkspace(t.prisma);
      const theirs = await createCompany(t.prisma, other.id, { name: 'Theirs' });
      const theirContact = await createContact(t.prisma, theirs);
      const theirLead = await createLead(t.prisma, theirs);
      const workspace = await createWorkspace(t.prisma);
      const mine = companyRecord({ contacts: [contactRecord({ id: theirContact.id })] });

      const lines = await importRefused(workspace.id, {
        companies: [companyRecord({ id: theirs.id, name: 'Hijacked' }), mine],
        leads: [leadRecord(mine, { id: theirLead.id })],
      });

      expect(lines.slice(1)).toEqual([
        `  companies[0] (id ${theirs.id}): id ${theirs.id} belongs to another workspace`,
        `  companies[1].contacts[0] (id ${theirContact.id}): id ${theirContact.id} belongs to another workspace`,
        `  leads[0] (id ${theirLead.id}): id ${theirLead.id} belongs to another workspace`,
      ]);
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
        companies: 0,
        contacts: 0,
        leads: 0,
      });
      await expect(t.prisma.company.findUnique({ where: { id: theirs.id } })).resolves.toEqual(
        theirs,
      );
      await expect(
        t.prisma.contact.findUnique({ where: { id: theirContact.id } }),
      ).resolves.toEqual(theirContact);
      await expect(t.prisma.lead.findUnique({ where: { id: theirLead.id } })).resolves.toEqual(
        theirLead,
      );
    });

    it('refuses a lead whose company is unknown, of another workspace, or misnamed', async () => {
      const other = await createWorkspace(t.prisma);
      const theirs = await createCompany(t.prisma, other.id);
      const workspace = await createWorkspace(t.prisma);
      const stored = await createCompany(t.prisma, workspace.id, { name: 'Stored Co' });
      const inFile = companyRecord({ name: 'In File Co' });

      const lines = await importRefused(workspace.id, {
        companies: [inFile],
        leads: [
          leadRecord(inFile),
          leadRecord({ ...inFile, id: 'co_nowhere' }, { id: 'ld_unknown' }),
          leadRecord({ ...inFile, id: theirs.id, name: theirs.name }, { id: 'ld_theirs' }),
          leadRecord({ ...inFile, id: stored.id, name: 'Stored Company' }, { id: 'ld_stored' }),
          leadRecord({ ...inFile, name: 'In-File Co' }, { id: 'ld_in_file' }),
        ],
      });

      expect(lines.slice(1)).toEqual([
        `  leads[1] (id ld_unknown): companyId co_nowhere is not a company of workspace ${workspace.id}`,
        `  leads[2] (id ld_theirs): companyId ${theirs.id} is not a company of workspace ${workspace.id}`,
        `  leads[3] (id ld_stored): companyName must be "Stored Co", the name of company ${stored.id}`,
        `  leads[4] (id ld_in_file): companyName must be "In File Co", the name of company ${inFile.id}`,
      ]);
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
        companies: 1,
        contacts: 0,
        leads: 0,
      });
    });

    it('refuses an id used twice in the file', async () => {
      const workspace = await createWorkspace(t.prisma);
      const twice = companyRecord();

      const lines = await importRefused(workspace.id, {
        companies: [twice, { ...twice, name: 'Again' }],
      });

      expect(lines.slice(1)).toEqual([
        `  companies[1] (id ${twice.id}): id ${twice.id} is already used by companies[0]`,
      ]);
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
        companies: 0,
        contacts: 0,
        leads: 0,
      });
    });

    it('refuses a workspace that does not exist', async () => {
      const lines = await importRefused('ws_nowhere', { companies: [companyRecord()] });

      expect(lines).toEqual(['error: workspace ws_nowhere does not exist']);
      await expect(t.prisma.company.count({ where: { workspaceId: 'ws_nowhere' } })).resolves.toBe(
        0,
      );
    });

    it.each([
      ['{"companies": [', /^error: --file .* is not valid JSON: /],
      ['[]', /^error: the file must hold one JSON object/],
      ['{"companies": {}}', /^error: "companies" must be an array$/],
      [
        '{"companies": [], "contacts": []}',
        /^error: the file has unknown top-level field "contacts"/,
      ],
    ])('refuses the file %s as a whole, in one line', async (content, message) => {
      const workspace = await createWorkspace(t.prisma);

      const lines = await importRefused(workspace.id, content);

      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
    });

    it('refuses a file that does not exist, naming --file', async () => {
      const workspace = await createWorkspace(t.prisma);
      const missing = join(directory, 'missing.json');

      const run = await admin('import', '--workspace', workspace.id, '--file', missing);

      expect(run).toStrictEqual({
        status: 1,
        stdout: '',
        stderr: `error: --file ${missing}: no such file\n`,
      });
    });
  });

  describe('bounds and text that must come back unchanged', () => {
    it('refuses a field over its maximum length, naming the record and the field', async () => {
      const workspace = await createWorkspace(t.prisma);
      const max = COMPANY_FIELDS.name.maxLength;
      const long = companyRecord({ id: 'co_long_9', name: 'N'.repeat(max + 1) });
      const longContact = contactRecord({
        id: 'ct_long_1',
        linkedin: `https://x.example/${'a'.repeat(300)}`,
      });

      const lines = await importRefused(workspace.id, {
        companies: [companyRecord(), long, companyRecord({ contacts: [longContact] })],
      });

      expect(lines).toEqual([
        'error: import refused, nothing was written: 2 records are invalid',
        `  companies[1] (id co_long_9): name must be at most ${max} characters (it has ${max + 1})`,
        '  companies[2].contacts[0] (id ct_long_1): linkedin must be at most 300 characters (it has 318)',
      ]);
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
        companies: 0,
        contacts: 0,
        leads: 0,
      });
    });

    it(`refuses a company with more than ${MAX_CONTACTS_PER_COMPANY} contacts`, async () => {
      const workspace = await createWorkspace(t.prisma);
      const crowded = companyRecord({
        id: 'co_crowded',
        contacts: Array.from({ length: MAX_CONTACTS_PER_COMPANY + 1 }, () => contactRecord()),
      });

      const lines = await importRefused(workspace.id, { companies: [crowded] });

      expect(lines.slice(1)).toEqual([
        `  companies[0] (id co_crowded): contacts must hold at most ${MAX_CONTACTS_PER_COMPANY} contacts (it holds ${MAX_CONTACTS_PER_COMPANY + 1})`,
      ]);
    });

    it('refuses a lone UTF-16 surrogate ("\\ud800" in the file), naming the record and field', async () => {
      const workspace = await createWorkspace(t.prisma);
      const lone = companyRecord({ id: 'co_lone', name: 'Acme' });
      // The escape as it appears in the file: JSON can write a surrogate that UTF-8 cannot.
      const file = JSON.stringify({ companies: [lone] }).replace('"Acme"', '"Acme \\ud800"');

      const lines = await importRefused(workspace.id, file);

      expect(lines).toEqual([
        'error: import refused, nothing was written: 1 record is invalid',
        '  companies[0] (id co_lone): name holds a lone UTF-16 surrogate (U+D800, character 6), which UTF-8 cannot encode: it would be stored as U+FFFD',
      ]);
      await expect(t.prisma.company.count({ where: { workspaceId: workspace.id } })).resolves.toBe(
        0,
      );
    });

    it('keeps astral characters (emoji) and every other character, at the maximum length, unchanged through the API', async () => {
      const workspace = await createWorkspace(t.prisma);
      const { key } = await createApiKey(t.prisma, workspace.id);
      const max = COMPANY_FIELDS.name.maxLength;
      const emoji = companyRecord({
        name: '\u{1f600}'.repeat(max),
        city: 'Z\u00fcrich \u{1f3d4}\ufe0f \u2028 \t "quoted" \\ \u0001',
        contacts: [contactRecord({ name: 'Zo\u00eb \u{1f469}\u200d\u{1f4bb} \u{10ffff}' })],
      });
      const itsLead = leadRecord(emoji, { signal: 'Visited \u{1f525} pricing' });

      await importJson(workspace.id, { companies: [emoji], leads: [itsLead] });

      const api = await listed(key);
      expect(api.companies.data).toStrictEqual([emoji]);
      expect(api.leads.data).toStrictEqual([itsLead]);
      const one = await getWithKey(t.app, `/v1/companies/${emoji.id}`, key);
      expect(one.body).toStrictEqual(emoji);
    });

    it('refuses a file that is not valid UTF-8, saying where, instead of reading U+FFFD', async () => {
      const workspace = await createWorkspace(t.prisma);
      const path = join(directory, 'latin1.json');
      const text = JSON.stringify({ companies: [companyRecord({ name: 'Caf\u00e9' })] }, null, 1);
      // Latin-1: é is the single byte 0xE9, which UTF-8 does not accept there.
      await writeFile(path, Buffer.from(text, 'latin1'));

      const run = await admin('import', '--workspace', workspace.id, '--file', path);

      const byte = Buffer.from(text, 'latin1').indexOf(0xe9);
      const line = text.slice(0, byte).split('\n').length;
      const column = byte - text.lastIndexOf('\n', byte);
      expect(run).toStrictEqual({
        status: 1,
        stdout: '',
        stderr: `error: --file ${path} is not valid UTF-8: byte ${byte + 1} (line ${line}, byte ${column} of the line), 0xe9, is not UTF-8\n`,
      });
    });
  });

  describe('ids: every one the import accepts is read back at its path', () => {
    it('refuses the ids that a single-item path cannot name, and writes nothing', async () => {
      const workspace = await createWorkspace(t.prisma);
      const named = companyRecord({ id: 'co_named' });

      const lines = await importRefused(workspace.id, {
        companies: [
          named,
          companyRecord({ id: 'changes' }),
          companyRecord({ id: '.' }),
          companyRecord({ id: '..' }),
        ],
        leads: [leadRecord(named, { id: 'changes' })],
      });

      expect(lines).toEqual([
        'error: import refused, nothing was written: 4 records are invalid',
        '  companies[1] (no valid id): id "changes" is reserved: /v1/companies/changes is the change feed, so the item could not be read',
        '  companies[2] (no valid id): id "." is reserved: URL clients resolve /v1/companies/. to another path, so the item could not be read',
        '  companies[3] (no valid id): id ".." is reserved: URL clients resolve /v1/companies/.. to another path, so the item could not be read',
        '  leads[0] (no valid id): id "changes" is reserved: /v1/leads/changes is the change feed, so the item could not be read',
      ]);
      await expect(rowCounts(workspace.id)).resolves.toStrictEqual({
        companies: 0,
        contacts: 0,
        leads: 0,
      });
    });

    it('reads back, percent-encoded, any id it accepted: letter case of the feed, slashes, dots, %, ?, #, any character', async () => {
      // Ids are unique across workspaces: each one is imported once, as it is.
      const imported = new Set<string>();
      const fixed = [
        // Routes are case-sensitive: these are ids, not the change feed.
        'Changes',
        'CHANGES',
        'changes/',
        '...',
        './x',
        'a/../b',
        '%2E%2E',
        '%00',
        '?a=1',
        '#top',
        ' x ',
        '+',
      ];
      const character = fc.oneof(
        fc.constantFrom(
          '/',
          '.',
          '%',
          '?',
          '#',
          ' ',
          '+',
          '&',
          ';',
          '\\',
          '"',
          'é',
          '😀',
          'c',
          'C',
        ),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      );
      const id = fc
        .array(character, { minLength: 1, maxLength: 12 })
        .map((parts) => parts.join(''))
        .filter(
          // What the import refuses: blank, NUL, and the reserved ids (the test above).
          (value) =>
            value.trim() !== '' &&
            !value.includes('\u0000') &&
            !['changes', '.', '..'].includes(value),
        );

      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(id, { minLength: 1, maxLength: 20 }), async (generated) => {
          // A generated id may also be a fixed one (`+`): each is imported once.
          const ids = [...new Set([...fixed, ...generated])].filter(
            (value) => !imported.has(value),
          );
          for (const value of ids) imported.add(value);
          if (ids.length === 0) return;
          // A workspace and a key per run: each run's reads stay inside the key's per-minute limit.
          const workspace = await createWorkspace(t.prisma);
          const { key } = await createApiKey(t.prisma, workspace.id);
          const companies = ids.map((value) => companyRecord({ id: value }));
          await importJson(workspace.id, {
            companies,
            leads: companies.map((of) => leadRecord(of, { id: of.id })),
          });
          for (const value of ids) {
            for (const resource of ['companies', 'leads']) {
              const response = await getWithKey(
                t.app,
                `/v1/${resource}/${encodeURIComponent(value)}`,
                key,
              );
              expect([value, response.status, response.body.id]).toEqual([value, 200, value]);
            }
          }
        }),
        propertyOptions(5),
      );
    }, 120_000);
  });

  describe('seed --demo', () => {
    it('makes the demo workspace with a few hundred companies and a working key; again, the same data and a new key', async () => {
      const first = await admin('seed', '--demo', '--json');

      expect(first).toMatchObject({ status: 0, stderr: '' });
      const output = JSON.parse(first.stdout) as { key: string };
      expect(output).toStrictEqual({
        workspace: { id: 'demo', name: 'Demo workspace', plan: 'growth', suspended: false },
        key: expect.stringMatching(/^st_[0-9A-Za-z]{38}$/),
      });
      const me = await getWithKey(t.app, '/v1/me', output.key);
      expect(me.status).toBe(200);
      expect(me.body).toStrictEqual({ id: 'demo', name: 'Demo workspace', plan: 'growth' });

      const companyIds = await pageThrough(t.app, '/v1/companies', output.key, 200);
      expect(companyIds.length).toBeGreaterThanOrEqual(200);
      expect(companyIds.length).toBeLessThanOrEqual(500);
      const { companies, leads } = await listed(output.key);
      for (const c of companies.data as CompanyDto[]) {
        expect(c.intentLevel).toBe(
          c.intentScore >= 70 ? 'hot' : c.intentScore >= 40 ? 'warm' : 'cold',
        );
        expect(Date.parse(c.firstSeen)).toBeLessThanOrEqual(Date.parse(c.lastSeen));
        if (c.siren !== null) expect(c.siren).toMatch(/^\d{9}$/);
      }
      expect(leads.total).toBeGreaterThanOrEqual(100);
      expect(leads.total).toBeLessThanOrEqual(150);
      const known = new Set(companyIds);
      for (const l of leads.data as LeadDto[]) expect(known.has(l.companyId)).toBe(true);
      const rowsAfterFirst = await rowCounts('demo');

      // Whatever became of the workspace, seeding again restores it and refreshes the same records.
      await admin(
        'workspace',
        'update',
        '--id',
        'demo',
        '--plan',
        'starter',
        '--suspended',
        'true',
      );
      const second = await admin('seed', '--demo');

      expect(second).toMatchObject({ status: 0, stderr: '' });
      expect(second.stdout).toMatch(
        /^Seeded workspace demo "Demo workspace" \(growth\) with \d+ companies/,
      );
      const secondKey = /(st_[0-9A-Za-z]+)\s*$/.exec(second.stdout)?.[1] ?? '';
      expect(secondKey).not.toBe(output.key);
      await expect(rowCounts('demo')).resolves.toStrictEqual(rowsAfterFirst);
      expect((await getWithKey(t.app, '/v1/me', secondKey)).status).toBe(200);
      expect((await getWithKey(t.app, '/v1/me', output.key)).status).toBe(200);
      const keys = await t.prisma.apiKey.findMany({ where: { workspaceId: 'demo' } });
      expect(keys.map((k) => k.name)).toEqual(['Demo key', 'Demo key']);
    });
  });
});
