import {
  COMPANY_FIELDS,
  CONTACT_FIELDS,
  MAX_CONTACTS_PER_COMPANY,
} from '../companies/company.fields';
import { LEAD_FIELDS } from '../leads/lead.fields';
import { checkImportFile, describeProblems } from './import-file';

function company(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'co_1',
    name: 'Lumen Analytics',
    domain: 'lumenanalytics.fr',
    industry: 'Software',
    size: '51-200',
    country: 'France',
    city: 'Lyon',
    revenue: '10M-50M',
    siren: null,
    intentScore: 72,
    intentLevel: 'hot',
    icpScore: 60,
    commercialScore: 67.2,
    crmStatus: 'new',
    visitsCount: 12,
    firstSeen: '2026-02-01T08:00:00.000Z',
    lastSeen: '2026-02-20T17:30:00.000Z',
    contacts: [contact()],
    ...overrides,
  };
}

function contact(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'ct_1',
    name: 'Claire Dubois',
    jobTitle: 'CTO',
    email: null,
    phone: null,
    linkedin: null,
    seniority: 'c_level',
    ...overrides,
  };
}

function lead(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'ld_1',
    companyId: 'co_1',
    companyName: 'Lumen Analytics',
    contactName: 'Claire Dubois',
    contactTitle: 'CTO',
    intentScore: 72,
    intentLevel: 'hot',
    signal: 'Visited the pricing page 4 times',
    recommendedAction: 'Call within 24 hours',
    status: 'new',
    createdAt: '2026-02-15T10:00:00.000Z',
    contactEmail: null,
    assignedToId: null,
    ...overrides,
  };
}

function problemsOf(file: unknown): string[] {
  return describeProblems(checkImportFile(file));
}

describe('checkImportFile', () => {
  it('accepts records of exactly the API shape and parses their dates', () => {
    const file = checkImportFile({ companies: [company()], leads: [lead()] });

    expect(describeProblems(file)).toEqual([]);
    expect(file.companies[0].value).toMatchObject({
      id: 'co_1',
      firstSeen: new Date('2026-02-01T08:00:00.000Z'),
      contacts: [contact()],
    });
    expect(file.leads[0].value?.createdAt).toEqual(new Date('2026-02-15T10:00:00.000Z'));
  });

  it('accepts a file without companies or leads', () => {
    expect(problemsOf({})).toEqual([]);
  });

  it.each([
    [{ intentScore: 100.5 }, 'intentScore must be a number between 0 and 100'],
    [{ icpScore: -1 }, 'icpScore must be a number between 0 and 100'],
    [{ commercialScore: '50' }, 'commercialScore must be a number between 0 and 100'],
    [{ visitsCount: 1.5 }, 'visitsCount must be an integer between 0 and 2147483647'],
    [{ visitsCount: -1 }, 'visitsCount must be an integer between 0 and 2147483647'],
    [{ intentLevel: 'lukewarm' }, 'intentLevel must be one of hot, warm, cold'],
    [
      { crmStatus: 'open' },
      'crmStatus must be one of new, qualified, in_crm, contacted, won, lost',
    ],
    [{ name: '' }, 'name must be a non-empty string'],
    [{ domain: 42 }, 'domain must be a non-empty string'],
    [{ siren: 732829320 }, 'siren must be a non-empty string or null'],
    [{ firstSeen: 'yesterday' }, 'firstSeen must be an ISO 8601 date-time'],
    [{ lastSeen: '2026-02-30T10:00:00Z' }, 'lastSeen must be an ISO 8601 date-time'],
    [
      { lastSeen: '2026-02-20T17:30:00.0001Z' },
      'lastSeen must not be more precise than milliseconds',
    ],
    [{ lastSeen: '2026-01-01T00:00:00.000Z' }, 'lastSeen must not be before firstSeen'],
    [
      { firstSeen: '0000-06-01T00:00:00Z' },
      'firstSeen must be between the years 0001 and 9999 (UTC)',
    ],
    [
      { firstSeen: '0001-01-01T00:30:00+01:00' },
      'firstSeen must be between the years 0001 and 9999 (UTC)',
    ],
    [{ contacts: {} }, 'contacts must be an array'],
    [{ website: 'https://lumen.fr' }, 'website is not a field of this record'],
  ])('refuses a company with %j: %s', (overrides, message) => {
    expect(problemsOf({ companies: [company(overrides)] })).toEqual([
      `companies[0] (id co_1): ${message}`,
    ]);
  });

  it('names a missing field, and asks for null rather than an absent nullable field', () => {
    const incomplete = company();
    delete incomplete.city;
    delete incomplete.siren;

    expect(problemsOf({ companies: [incomplete] })).toEqual([
      'companies[0] (id co_1): city is required; siren is required (null when unknown)',
    ]);
  });

  it('keeps a fraction of zeros beyond milliseconds, which loses nothing', () => {
    expect(
      problemsOf({ companies: [company({ lastSeen: '2026-02-20T17:30:00.120000Z' })] }),
    ).toEqual([]);
  });

  it.each([
    [{ seniority: 'intern' }, 'seniority must be one of c_level, vp, director, manager, ic'],
    [{ email: undefined }, 'email is required (null when unknown)'],
    [{ phone: '' }, 'phone must be a non-empty string or null'],
    [{ jobTitle: null }, 'jobTitle must be a non-empty string'],
  ])('refuses a contact with %j: %s', (overrides, message) => {
    const raw = JSON.parse(JSON.stringify(company({ contacts: [contact(overrides)] }))) as unknown;

    const file = checkImportFile({ companies: [raw] });

    expect(describeProblems(file)).toEqual([`companies[0].contacts[0] (id ct_1): ${message}`]);
    // A company is written with its contacts or not at all.
    expect(file.companies[0].value).toBeNull();
  });

  it.each([
    [{ status: 'won' }, 'status must be one of new, contacted, qualified, converted, dismissed'],
    [{ intentLevel: 'HOT' }, 'intentLevel must be one of hot, warm, cold'],
    [{ createdAt: 1700000000000 }, 'createdAt must be an ISO 8601 date-time'],
    [{ contactEmail: undefined }, 'contactEmail is required (null when unknown)'],
    [{ companyId: '' }, 'companyId must be a non-empty string'],
  ])('refuses a lead with %j: %s', (overrides, message) => {
    const raw = JSON.parse(JSON.stringify(lead(overrides))) as unknown;

    expect(problemsOf({ leads: [raw] })).toEqual([`leads[0] (id ld_1): ${message}`]);
  });

  it('lists every bad record with its index and id, every bad field of each, in file order', () => {
    const problems = problemsOf({
      companies: [
        company({ id: 'co_1' }),
        company({ id: 'co_2', intentScore: 101, crmStatus: 'x', contacts: [] }),
        company({
          id: 'co_3',
          contacts: [contact({ id: 'ct_3' }), contact({ id: 'ct_4', seniority: 'x' })],
        }),
        'not a company',
      ],
      leads: [lead(), lead({ id: 'ld_2', status: 'x' }), { companyId: 'co_1' }],
    });

    expect(problems).toEqual([
      'companies[1] (id co_2): intentScore must be a number between 0 and 100; crmStatus must be one of new, qualified, in_crm, contacted, won, lost',
      'companies[2].contacts[1] (id ct_4): seniority must be one of c_level, vp, director, manager, ic',
      'companies[3] (no valid id): must be a JSON object',
      'leads[1] (id ld_2): status must be one of new, contacted, qualified, converted, dismissed',
      expect.stringMatching(
        /^leads\[2\] \(no valid id\): id is required; companyName is required;/,
      ),
    ]);
  });

  it('refuses an id used twice in the file, contacts across companies included', () => {
    const problems = problemsOf({
      companies: [
        company({ id: 'co_1', contacts: [contact({ id: 'ct_1' })] }),
        company({ id: 'co_1', contacts: [contact({ id: 'ct_1' })] }),
      ],
      leads: [lead({ id: 'ld_1' }), lead({ id: 'ld_1' })],
    });

    expect(problems).toEqual([
      'companies[1] (id co_1): id co_1 is already used by companies[0]',
      'companies[1].contacts[0] (id ct_1): id ct_1 is already used by companies[0].contacts[0]',
      'leads[1] (id ld_1): id ld_1 is already used by leads[0]',
    ]);
  });

  it.each([
    [[], 'the file must hold one JSON object {"companies": [...], "leads": [...]}'],
    [null, 'the file must hold one JSON object {"companies": [...], "leads": [...]}'],
    [{ companies: {} }, '"companies" must be an array'],
    [{ leads: 'none' }, '"leads" must be an array'],
    [
      { contacts: [] },
      'the file has unknown top-level field "contacts": only "companies" and "leads" are allowed',
    ],
  ])('refuses a file shaped %j as a whole', (file, message) => {
    expect(() => checkImportFile(file)).toThrow(message);
  });

  describe('text bounds (the field maps, company.fields.ts and lead.fields.ts)', () => {
    const maps = [
      ['companies[0] (id co_1)', COMPANY_FIELDS, (o: Record<string, unknown>) => company(o)],
      [
        'companies[0].contacts[0] (id ct_1)',
        CONTACT_FIELDS,
        (o: Record<string, unknown>) => company({ contacts: [contact(o)] }),
      ],
      ['leads[0] (id ld_1)', LEAD_FIELDS, (o: Record<string, unknown>) => o],
    ] as const;
    const cases = maps.flatMap(([where, fields, wrap]) =>
      Object.entries(fields).flatMap(([name, field]) =>
        field.kind === 'text' || field.kind === 'nullableText'
          ? [[where, name, field.maxLength, wrap] as const]
          : [],
      ),
    );

    function fileWith(where: string, wrap: (o: Record<string, unknown>) => unknown, o: object) {
      return where.startsWith('leads')
        ? { leads: [lead(o as Record<string, unknown>)] }
        : { companies: [wrap(o as Record<string, unknown>)] };
    }

    it.each(cases)('%s: %s accepts %i characters, refuses one more', (where, name, max, wrap) => {
      const atBound = fileWith(where, wrap, { [name]: 'x'.repeat(max) });
      const over = fileWith(where, wrap, { [name]: 'x'.repeat(max + 1) });

      expect(describeProblems(checkImportFile(atBound))).toEqual([]);
      // A record whose id is refused is named by its place alone.
      const named = name === 'id' ? where.replace(/\(id [^)]*\)$/, '(no valid id)') : where;
      expect(describeProblems(checkImportFile(over))).toEqual([
        `${named}: ${name} must be at most ${max} characters (it has ${max + 1})`,
      ]);
    });

    it('counts characters as PostgreSQL does: an emoji (two UTF-16 units) is one', () => {
      const max = COMPANY_FIELDS.name.maxLength;
      expect(problemsOf({ companies: [company({ name: '\u{1f600}'.repeat(max) })] })).toEqual([]);
      expect(problemsOf({ companies: [company({ name: `${'\u{1f600}'.repeat(max)}!` })] })).toEqual(
        [`companies[0] (id co_1): name must be at most ${max} characters (it has ${max + 1})`],
      );
    });

    it(`refuses more than ${MAX_CONTACTS_PER_COMPANY} contacts for a company`, () => {
      const contacts = (n: number) =>
        Array.from({ length: n }, (_, i) => contact({ id: `ct_${i}` }));

      expect(
        problemsOf({ companies: [company({ contacts: contacts(MAX_CONTACTS_PER_COMPANY) })] }),
      ).toEqual([]);
      expect(
        problemsOf({ companies: [company({ contacts: contacts(MAX_CONTACTS_PER_COMPANY + 1) })] }),
      ).toEqual([
        `companies[0] (id co_1): contacts must hold at most ${MAX_CONTACTS_PER_COMPANY} contacts (it holds ${MAX_CONTACTS_PER_COMPANY + 1})`,
      ]);
    });
  });

  describe('text that would not come back unchanged', () => {
    it.each([
      ['\ud800', 'U+D800, character 1'],
      ['Acme \udfff', 'U+DFFF, character 6'],
      ['\u{1f600} \udc00\ud83d', 'U+DC00, character 3'],
    ])('refuses a lone surrogate: %j (%s)', (name, where) => {
      expect(problemsOf({ companies: [company({ name })] })).toEqual([
        `companies[0] (id co_1): name holds a lone UTF-16 surrogate (${where}), which UTF-8 cannot encode: it would be stored as U+FFFD`,
      ]);
    });

    it('refuses a lone surrogate in any text field, a contact’s and a lead’s too', () => {
      expect(
        problemsOf({
          companies: [company({ contacts: [contact({ linkedin: 'https://x.example/\ud83d' })] })],
          leads: [lead({ signal: 'Visited \udead twice' })],
        }),
      ).toEqual([
        'companies[0].contacts[0] (id ct_1): linkedin holds a lone UTF-16 surrogate (U+D83D, character 19), which UTF-8 cannot encode: it would be stored as U+FFFD',
        'leads[0] (id ld_1): signal holds a lone UTF-16 surrogate (U+DEAD, character 9), which UTF-8 cannot encode: it would be stored as U+FFFD',
      ]);
    });

    it('refuses NUL, which PostgreSQL text cannot hold', () => {
      expect(problemsOf({ companies: [company({ city: 'Ly\u0000on' })] })).toEqual([
        'companies[0] (id co_1): city must not hold NUL (U+0000), which PostgreSQL text cannot store',
      ]);
    });

    it('accepts every other character, astral ones and noncharacters included', () => {
      const name = 'Caf\u00e9 \u{1f600} \u{10ffff} \ufffe \u2028 \t\u0001';
      const file = checkImportFile({ companies: [company({ name })] });

      expect(describeProblems(file)).toEqual([]);
      expect(file.companies[0].value?.name).toBe(name);
    });
  });
});
