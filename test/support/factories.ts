import { randomUUID } from 'node:crypto';
import { generateApiKey, displayPrefix, hashApiKey } from '../../src/auth/api-key';
import type { CompanyDto, ContactDto } from '../../src/companies/dto/company.dto';
import type { LeadDto } from '../../src/leads/dto/lead.dto';
import type {
  Company,
  Contact,
  Lead,
  PageView,
  Prisma,
  PrismaClient,
  Visit,
  Workspace,
} from '../../src/generated/prisma/client';

/*
 * Small factories with defaults: a test states only what it is about. Ids are unique per call,
 * dates fixed, so that tests that compare exact bodies are stable.
 */
let sequence = 0;
const next = () => (++sequence).toString().padStart(6, '0');

export async function createWorkspace(
  db: PrismaClient,
  overrides: Partial<Workspace> = {},
): Promise<Workspace> {
  return db.workspace.create({
    data: { id: `ws_${next()}`, name: 'Acme Analytics', plan: 'growth', ...overrides },
  });
}

/** A key of the workspace, returned with its full value (as the admin tool shows it once). */
export async function createApiKey(
  db: PrismaClient,
  workspaceId: string,
  overrides: {
    revokedAt?: Date | null;
    name?: string;
    expiresAt?: Date | null;
    scopes?: string[];
  } = {},
): Promise<{ id: string; key: string }> {
  const key = generateApiKey();
  const secret = process.env.API_KEY_SECRET ?? '';
  const created = await db.apiKey.create({
    data: {
      id: randomUUID(),
      workspaceId,
      name: overrides.name ?? 'CRM sync',
      prefix: displayPrefix(key),
      hash: hashApiKey(key, secret),
      revokedAt: overrides.revokedAt ?? null,
      expiresAt: overrides.expiresAt ?? null,
      scopes: overrides.scopes ?? [],
    },
  });
  return { id: created.id, key };
}

/** What a company is unless a test says otherwise: its row and its record alike. */
const COMPANY_DEFAULTS = {
  industry: 'Software',
  size: '51-200',
  country: 'France',
  city: 'Lyon',
  revenue: '10M-50M',
  siren: null,
  intentScore: 50,
  intentLevel: 'warm',
  icpScore: 60,
  commercialScore: 55,
  crmStatus: 'new',
  visitsCount: 3,
} as const;

/** A company's columns with defaults, for `create` or one multi-row `createMany`. */
export function companyRow(
  workspaceId: string,
  overrides: Partial<Omit<Company, 'workspaceId'>> = {},
): Prisma.CompanyCreateManyInput {
  const n = next();
  return {
    id: `co_${n}`,
    workspaceId,
    name: `Company ${n}`,
    domain: `company-${n}.example`,
    ...COMPANY_DEFAULTS,
    firstSeen: new Date('2026-02-01T08:00:00.000Z'),
    lastSeen: new Date('2026-02-20T17:30:00.000Z'),
    ...overrides,
  };
}

/**
 * An INSERT of one company (companyRow's columns) and its values, for a test's own connection (a
 * transaction left open, a writer that commits late); `suffix` ends the statement (ON CONFLICT ...).
 */
export function companyInsert(
  row: Prisma.CompanyCreateManyInput,
  suffix = '',
): [string, unknown[]] {
  const entries = Object.entries(row).filter(([, value]) => value !== undefined);
  const columns = entries.map(([name]) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  const places = entries.map((_, i) => `$${i + 1}`);
  return [
    `INSERT INTO companies (${columns.join(', ')}) VALUES (${places.join(', ')}) ${suffix}`,
    entries.map(([, value]) => value),
  ];
}

export async function createCompany(
  db: PrismaClient,
  workspaceId: string,
  overrides: Partial<Omit<Company, 'workspaceId'>> = {},
): Promise<Company> {
  return db.company.create({ data: companyRow(workspaceId, overrides) });
}

/**
 * Rows per INSERT, so that Prisma sends each createMany as one statement: past PostgreSQL's 65,535
 * parameters (19 a company, 6 a contact) it cuts the rows into chunks and sends them all at once
 * on the transaction's one connection, which pg deprecates (pg 9 refuses it).
 */
const ROWS_PER_INSERT = 2_000;

/** `rows` written by `insert`, ROWS_PER_INSERT at a time, in one transaction. */
async function insertInChunks<Row>(
  db: PrismaClient,
  rows: Row[],
  insert: (tx: Prisma.TransactionClient, chunk: Row[]) => Promise<unknown>,
): Promise<void> {
  await db.$transaction(
    async (tx) => {
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
        await insert(tx, rows.slice(start, start + ROWS_PER_INSERT));
      }
    },
    // Twenty thousand companies take seconds on a loaded machine: past Prisma's default 5 s.
    { timeout: 120_000 },
  );
}

/**
 * `count` companies of the workspace in one transaction, ids `co_<workspace id>_<index>` in the
 * order of their scores (from 90 down by `scoreStep`, never below 0), each with `contactsEach`
 * contacts (in a second one). Returns the ids.
 */
export async function insertCompanies(
  db: PrismaClient,
  workspaceId: string,
  count: number,
  options: { scoreStep?: number; contactsEach?: number } = {},
): Promise<string[]> {
  const { scoreStep = 1, contactsEach = 0 } = options;
  const ids = Array.from(
    { length: count },
    (_, i) => `co_${workspaceId}_${String(i).padStart(5, '0')}`,
  );
  const companies = ids.map((id, i) =>
    companyRow(workspaceId, {
      id,
      name: `Company ${i}`,
      domain: `company-${i}.example`,
      intentScore: Math.max(0, 90 - i * scoreStep),
    }),
  );
  await insertInChunks(db, companies, (tx, data) => tx.company.createMany({ data }));
  const contacts = ids.flatMap((companyId) =>
    Array.from({ length: contactsEach }, (_, j) => ({
      id: `ct_${companyId}_${j}`,
      workspaceId,
      companyId,
      name: `Contact ${j}`,
      jobTitle: 'Head of Growth',
      seniority: 'director' as const,
    })),
  );
  if (contacts.length > 0) {
    await insertInChunks(db, contacts, (tx, data) => tx.contact.createMany({ data }));
  }
  return ids;
}

const CONTACT_DEFAULTS = {
  jobTitle: 'Head of Growth',
  email: null,
  phone: null,
  linkedin: null,
  seniority: 'director',
} as const;

export async function createContact(
  db: PrismaClient,
  company: Pick<Company, 'id' | 'workspaceId'>,
  overrides: Partial<Omit<Contact, 'workspaceId' | 'companyId'>> = {},
): Promise<Contact> {
  const n = next();
  return db.contact.create({
    data: {
      id: `ct_${n}`,
      workspaceId: company.workspaceId,
      companyId: company.id,
      name: `Contact ${n}`,
      ...CONTACT_DEFAULTS,
      ...overrides,
    },
  });
}

const LEAD_DEFAULTS = {
  contactTitle: 'VP Sales',
  contactEmail: null,
  intentScore: 70,
  intentLevel: 'hot',
  signal: 'Visited the pricing page 4 times this week',
  recommendedAction: 'Call within 24 hours',
  status: 'new',
  assignedToId: null,
} as const;

export async function createLead(
  db: PrismaClient,
  company: Pick<Company, 'id' | 'workspaceId'>,
  overrides: Partial<Omit<Lead, 'workspaceId' | 'companyId'>> = {},
): Promise<Lead> {
  const n = next();
  return db.lead.create({
    data: {
      id: `ld_${n}`,
      workspaceId: company.workspaceId,
      companyId: company.id,
      contactName: `Contact ${n}`,
      ...LEAD_DEFAULTS,
      createdAt: new Date('2026-02-15T10:00:00.000Z'),
      ...overrides,
    },
  });
}

/**
 * A company as the API answers it and an import file holds it (no workspace: the file's is given
 * to the import); a fractional score and milliseconds, so that a round trip shows any loss.
 */
export function companyRecord(overrides: Partial<CompanyDto> = {}): CompanyDto {
  const n = next();
  return {
    id: `co_${n}`,
    name: `Company ${n}`,
    domain: `company-${n}.example`,
    ...COMPANY_DEFAULTS,
    icpScore: 61.5,
    firstSeen: '2026-02-01T08:00:00.000Z',
    lastSeen: '2026-02-20T17:30:00.123Z',
    contacts: [],
    ...overrides,
  };
}

/** A contact as the API answers it and an import file holds it, inside its company. */
export function contactRecord(overrides: Partial<ContactDto> = {}): ContactDto {
  const n = next();
  return {
    id: `ct_${n}`,
    name: `Contact ${n}`,
    ...CONTACT_DEFAULTS,
    ...overrides,
  };
}

/** A lead of `of` as the API answers it and an import file holds it. */
export function leadRecord(of: CompanyDto, overrides: Partial<LeadDto> = {}): LeadDto {
  const n = next();
  return {
    id: `ld_${n}`,
    companyId: of.id,
    companyName: of.name,
    contactName: `Contact ${n}`,
    ...LEAD_DEFAULTS,
    createdAt: '2026-02-15T10:00:00.000Z',
    ...overrides,
  };
}

/** A page of a visit to seed: what a test does not state has a default (createVisit). */
export type PageViewSeed = Partial<
  Pick<PageView, 'hostname' | 'path' | 'title' | 'viewedAt' | 'secondsOnPage'>
>;

/** A visit to seed: its own columns (the derived ones follow its pages) and its pages. */
export type VisitSeed = Partial<
  Omit<Visit, 'workspaceId' | 'companyId' | 'durationSeconds' | 'pageViewCount' | 'landingPage'>
> & { pages?: PageViewSeed[] };

/** The instant `days` days before now, to the millisecond: the visits' retention counts from now. */
export function daysAgo(days: number): Date {
  return new Date(Date.now() - days * 24 * 60 * 60 * 1000);
}

/**
 * A visit of the company with its pages, written as the import writes them (visit-import.service.ts):
 * the visit's month made first, its page count and landing page derived from its pages, each page
 * in the visit's month with its place and company. Its start defaults to an hour ago (the reads
 * keep the visits within the retention, counted from now, so no fixed date stays readable); its
 * pages to one `/` page, each a minute after the one before, and its end to half a minute after
 * the last page. Returns the visit's row and its pages' rows.
 */
export async function createVisit(
  db: PrismaClient,
  company: Pick<Company, 'id' | 'workspaceId'>,
  { pages: pageSeeds = [{}], ...overrides }: VisitSeed = {},
): Promise<{ visit: Visit; pages: PageView[] }> {
  const n = next();
  const startedAt = overrides.startedAt ?? daysAgo(1 / 24);
  const pages = pageSeeds.map((page, position) => ({
    workspaceId: company.workspaceId,
    visitId: overrides.id ?? `vi_${n}`,
    visitStartedAt: startedAt,
    position,
    companyId: company.id,
    hostname: 'www.example.com',
    path: '/',
    title: null,
    viewedAt: new Date(startedAt.getTime() + position * 60_000),
    secondsOnPage: position === pageSeeds.length - 1 ? null : 60,
    ...page,
  }));
  const lastViewed = Math.max(...pages.map((page) => page.viewedAt.getTime()));
  const data = {
    id: `vi_${n}`,
    workspaceId: company.workspaceId,
    companyId: company.id,
    startedAt,
    endedAt: new Date(lastViewed + 30_000),
    pageViewCount: pages.length,
    landingPage: pages[0].path,
    referrer: null,
    source: null,
    medium: null,
    campaign: null,
    term: null,
    content: null,
    deviceType: 'desktop' as const,
    country: null,
    ...overrides,
  };
  await db.$queryRaw`SELECT visit_partitions_make(${startedAt}::timestamptz, ${startedAt}::timestamptz)`;
  const [visit] = await db.$transaction([
    db.visit.create({ data }),
    db.pageView.createMany({ data: pages }),
  ]);
  return { visit, pages };
}
